package manifest

import (
	"encoding/json"
	"io/fs"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// rawSource is the embedded source file, decoded as written: before the
// op table is filled in.
func rawSource(t *testing.T, file string) map[string]any {
	t.Helper()
	b, err := fs.ReadFile(schemaFiles, "schemas/"+file)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestSourcesListNoOp: no schema source names a served op: what is said of
// the ops is filled in from the table, so the table is the only list.
func TestSourcesListNoOp(t *testing.T) {
	entries, err := fs.ReadDir(schemaFiles, "schemas")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		var walk func(v any, at string)
		walk = func(v any, at string) {
			switch n := v.(type) {
			case map[string]any:
				for k, sub := range n {
					walk(sub, at+"/"+k)
				}
			case []any:
				for _, sub := range n {
					if s, ok := sub.(string); ok && strings.HasSuffix(at, "/enum") {
						if _, isOp := Op(s); isOp {
							t.Errorf("%s%s lists op %q by hand", e.Name(), at, s)
						}
					}
					walk(sub, at)
				}
			}
		}
		walk(rawSource(t, e.Name()), "")
	}
}

// TestFillFromOps: a row added to the table reaches the request's op enum
// and its field rules, and the audit event's enum, with no edit of a
// source; the events that are not ops stay after the ops.
func TestFillFromOps(t *testing.T) {
	get, _ := Op("get")
	list, _ := Op("list")
	peek, scan := get, list
	peek.Name, scan.Name = "peek", "scan"
	ops := append(Ops(), peek, scan)

	req := rawSource(t, "request.json")
	if err := fillFromOps(req, ops, RequestFields()); err != nil {
		t.Fatal(err)
	}
	want := []any{}
	for _, o := range ops {
		want = append(want, o.Name)
	}
	if got := dig(req, "properties", "op", "enum"); !slices.Equal(got.([]any), want) {
		t.Errorf("request op enum = %v, want %v", got, want)
	}
	rules, _ := req["allOf"].([]any)
	found := map[string][]any{}
	for _, r := range rules {
		names, _ := dig(r, "if", "properties", "op", "enum").([]any)
		for _, n := range names {
			found[n.(string)] = names
		}
	}
	if g := found["peek"]; !slices.Contains(g, any("get")) {
		t.Errorf("peek, which takes what get takes, is ruled with %v, not with get", g)
	}
	if g := found["scan"]; !slices.Contains(g, any("list")) {
		t.Errorf("scan, which takes what list takes, is ruled with %v, not with list", g)
	}
	if _, left := req[fromOps]; left {
		t.Errorf("%s is left in the filled request", fromOps)
	}

	ev := rawSource(t, "event.json")
	others, _ := dig(ev, "properties", "event", "enum").([]any)
	if err := fillFromOps(ev, ops, RequestFields()); err != nil {
		t.Fatal(err)
	}
	if got := dig(ev, "properties", "event", "enum").([]any); !slices.Equal(got, append(want, others...)) {
		t.Errorf("event enum = %v, want the ops %v then %v", got, want, others)
	}
}

// TestFillFromFields: a row added to the field table, with an op that
// needs it, reaches the request's properties (a string capped at its Max)
// and the op's rule, with no edit of a source; the properties the source
// writes (id, op) stay as written.
func TestFillFromFields(t *testing.T) {
	memo := Field{Name: "memo", Bit: FieldDeleted << 1, Max: 300}
	fields := append(RequestFields(), memo)
	jot := OpSpec{Name: "jot", Needs: memo.Bit}
	req := rawSource(t, "request.json")
	id := dig(req, "properties", "id")
	if err := fillFromOps(req, append(Ops(), jot), fields); err != nil {
		t.Fatal(err)
	}
	if got := dig(req, "properties", "memo"); !reflect.DeepEqual(got, map[string]any{"type": "string", "maxLength": 300}) {
		t.Errorf("property memo = %v", got)
	}
	if got := dig(req, "properties", "value", "minLength"); got != 1 {
		t.Errorf("value's minLength = %v, want the table's Min, 1", got)
	}
	if got := dig(req, "properties", "id"); !reflect.DeepEqual(got, id) {
		t.Errorf("id = %v, want it as the source writes it, %v", got, id)
	}
	var rule any
	for _, r := range req["allOf"].([]any) {
		if slices.Equal(dig(r, "if", "properties", "op", "enum").([]any), []any{"jot"}) {
			rule = dig(r, "then", "required")
		}
	}
	if !reflect.DeepEqual(rule, []any{"memo"}) {
		t.Errorf("jot's rule requires %v, want [memo]", rule)
	}
}

// TestFillFromOpsRefuses: a fill that cannot be made stops the build of
// every schema rather than publish a guess.
func TestFillFromOpsRefuses(t *testing.T) {
	for name, doc := range map[string]string{
		"unknown kind":              `{"x-from-ops": "oneOf"}`,
		"enum not an array":         `{"x-from-ops": "enum", "enum": "get"}`,
		"an op listed again":        `{"x-from-ops": "enum", "enum": ["get"]}`,
		"no properties":             `{"x-from-ops": "allOf"}`,
		"a field it lacks":          `{"x-from-ops": "allOf", "properties": {"op": {}, "env": {}}}`,
		"a property no field":       `{"x-from-ops": "properties", "properties": {"op": {}, "nope": {}}}`,
		"a raw field unsaid":        `{"x-from-ops": "properties", "properties": {"op": {}}}`,
		"properties not an object":  `{"x-from-ops": "properties", "properties": []}`,
		"an unknown kind in a list": `{"x-from-ops": ["properties", "oneOf"], "properties": {"id": {}}}`,
	} {
		var v any
		if err := json.Unmarshal([]byte(doc), &v); err != nil {
			t.Fatal(err)
		}
		if err := fillFromOps(v, Ops(), RequestFields()); err == nil {
			t.Errorf("%s: filled %s", name, doc)
		}
	}
}
