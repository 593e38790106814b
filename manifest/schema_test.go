package manifest

import (
	"bytes"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

type noLoader struct{}

func (noLoader) Load(url string) (any, error) { return nil, fmt.Errorf("no schema at %s", url) }

// compileAlone compiles the schema in b with nothing else loaded and no
// loader: a $ref to anything outside it fails.
func compileAlone(t *testing.T, name string, b []byte) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s is not JSON: %v", name, err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	if err := c.AddResource(SchemaPrefix+name, doc); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	sch, err := c.Compile(SchemaPrefix + name)
	if err != nil {
		t.Fatalf("%s does not compile on its own: %v", name, err)
	}
	return sch
}

// published compiles the published schema name alone.
func published(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	b, err := Schema(name)
	if err != nil {
		t.Fatal(err)
	}
	return compileAlone(t, name, b)
}

// closed compiles the closed form of name alone.
func closed(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	b, err := ClosedSchema(name)
	if err != nil {
		t.Fatal(err)
	}
	return compileAlone(t, name, b)
}

func instance(t *testing.T, s string) any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(s))
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return v
}

// schemaDoc is the published schema n, decoded.
func schemaDoc(t *testing.T, n string) any {
	t.Helper()
	b, err := Schema(n)
	if err != nil {
		t.Fatal(err)
	}
	return instance(t, string(b))
}

// TestSchemasStandAlone: every published schema is draft 2020-12, has the
// absolute $id of its name, compiles with nothing else loaded, and every
// $ref in it points inside it; each op's result is published on its own.
func TestSchemasStandAlone(t *testing.T) {
	for _, n := range SchemaNames() {
		b, err := Schema(n)
		if err != nil {
			t.Fatal(err)
		}
		doc := instance(t, string(b)).(map[string]any)
		if got := doc["$schema"]; got != "https://json-schema.org/draft/2020-12/schema" {
			t.Errorf("%s: $schema is %v, want draft 2020-12", n, got)
		}
		if got := doc["$id"]; got != SchemaPrefix+n {
			t.Errorf("%s: $id is %v, want %q", n, got, SchemaPrefix+n)
		}
		if refs, internal := bytes.Count(b, []byte(`"$ref": "`)), bytes.Count(b, []byte(`"$ref": "#`)); refs != internal {
			t.Errorf("%s: %d of its %d $refs point outside it", n, refs-internal, refs)
		}
		compileAlone(t, n, b)
		compileAlone(t, n, mustClosed(t, n))
	}
	for _, op := range Ops() {
		if !slices.Contains(SchemaNames(), "result."+op.Name) {
			t.Errorf("op %s has no result schema of its own", op.Name)
		}
	}
	for _, bad := range []string{"nope", "result.nope", "result.", "request.json", "result.json#/$defs/get"} {
		if _, err := Schema(bad); err == nil || !strings.Contains(err.Error(), "one of: request,") {
			t.Errorf("Schema(%q): %v, want a refusal that lists the names", bad, err)
		}
	}
}

func mustClosed(t *testing.T, n string) []byte {
	t.Helper()
	b, err := ClosedSchema(n)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSchemaRefsBundled: a part shared across sources is bundled where it
// is used, so the event's policy and the response's are the same schema.
func TestSchemaRefsBundled(t *testing.T) {
	pol := `{"allow": "yes"}`
	for _, c := range []struct{ name, doc string }{
		{"response", `{"id": 1, "ok": false, "error": {"code": "denied", "message": "m"}, "policy": ` + pol + `}`},
		{"error", `{"id": 1, "ok": false, "error": {"code": "denied", "message": "m"}, "policy": ` + pol + `}`},
		{"event", `{"v": 1, "ts": "2026-01-02T03:04:05.000000006Z", "seq": 1, "event": "denied", "source": "serve", "outcome": "denied", "code": "denied", "message": "m", "policy": ` + pol + `}`},
	} {
		if err := published(t, c.name).Validate(instance(t, c.doc)); err == nil {
			t.Errorf("%s accepts a policy whose allow is a string", c.name)
		}
		good := strings.Replace(c.doc, `"yes"`, "false", 1)
		if err := published(t, c.name).Validate(instance(t, good)); err != nil {
			t.Errorf("%s refuses a good document: %v", c.name, err)
		}
	}
}

// TestSchemasOpen: responses, results and events accept fields a later
// build adds; their closed forms, and the request, refuse them.
func TestSchemasOpen(t *testing.T) {
	ts := `"2026-01-02T03:04:05.000000006Z"`
	cases := []struct{ name, doc string }{
		{"response", `{"id": 1, "ok": true, "result": {}, "later": 1}`},
		{"response", `{"id": 1, "ok": true, "result": {}, "policy": {"allow": true, "later": 1}}`},
		{"error", `{"id": 1, "ok": false, "error": {"code": "denied", "message": "m", "later": 1}}`},
		{"event", `{"v": 1, "ts": ` + ts + `, "seq": 1, "event": "start", "source": "serve", "message": "m", "later": 1}`},
		{"result.get", `{"ref": "arca://a/b", "env": "e", "value": "v", "version": 1, "created_at": ` + ts + `, "updated_at": ` + ts + `, "later": 1}`},
		{"result.list", `{"env": "e", "records": [{"ref": "arca://a/b", "version": 1, "created_at": ` + ts + `, "updated_at": ` + ts + `, "later": 1}], "truncated": false, "omitted": 0}`},
		{"result.shutdown", `{"later": 1}`},
	}
	for _, c := range cases {
		if err := published(t, c.name).Validate(instance(t, c.doc)); err != nil {
			t.Errorf("%s refuses an added field: %v", c.name, err)
		}
		if err := closed(t, c.name).Validate(instance(t, c.doc)); err == nil {
			t.Errorf("the closed %s accepts an added field: %s", c.name, c.doc)
		}
	}
	if err := published(t, "request").Validate(instance(t, `{"op": "list", "later": 1}`)); err == nil {
		t.Error("the request schema accepts an unknown field")
	}
}

// TestResultSchemas: result.OP is result's $defs/OP, standing alone: a
// document valid under one is valid under the other.
func TestResultSchemas(t *testing.T) {
	ts := `"2026-01-02T03:04:05.000000006Z"`
	get := `{"ref": "arca://a/b", "env": "e", "value": "v", "version": 1, "created_at": ` + ts + `, "updated_at": ` + ts + `}`
	if err := published(t, "result.get").Validate(instance(t, get)); err != nil {
		t.Errorf("result.get refuses a get result: %v", err)
	}
	for _, bad := range []string{
		strings.Replace(get, `"version": 1`, `"version": 0`, 1),
		strings.Replace(get, `"ref": "arca://a/b"`, `"ref": "a/b"`, 1),
		strings.Replace(get, `"value": "v", `, ``, 1),
	} {
		if err := published(t, "result.get").Validate(instance(t, bad)); err == nil {
			t.Errorf("result.get accepts %s", bad)
		}
	}
	b, err := Schema("result")
	if err != nil {
		t.Fatal(err)
	}
	defs := instance(t, string(b)).(map[string]any)["$defs"].(map[string]any)
	for _, op := range Ops() {
		if _, ok := defs[op.Name]; !ok {
			t.Errorf("result has no $defs/%s", op.Name)
		}
	}
}

// TestSchemaSources: every embedded source is published under its name.
func TestSchemaSources(t *testing.T) {
	embedded, err := fs.Glob(schemaFiles, "schemas/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range embedded {
		if n := strings.TrimSuffix(p[len("schemas/"):], ".json"); !slices.Contains(SchemaNames(), n) {
			t.Errorf("%s is embedded but not published", p)
		}
	}
}

// TestSchemasMap: Schemas keys every published schema by its name.
func TestSchemasMap(t *testing.T) {
	all, err := Schemas()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(SchemaNames()) {
		t.Fatalf("Schemas has %d entries, want %d", len(all), len(SchemaNames()))
	}
	for _, n := range SchemaNames() {
		b, _ := Schema(n)
		if got := all[n]; !bytes.Equal(got, b) {
			t.Errorf("Schemas()[%q] differs from Schema(%q)", n, n)
		}
	}
}

// TestCodesMatchSchemas: the error codes the error response and the audit
// event allow are exactly Codes, in order.
func TestCodesMatchSchemas(t *testing.T) {
	want := make([]any, 0, len(Codes()))
	for _, c := range Codes() {
		want = append(want, string(c))
	}
	for where, enum := range map[string]any{
		"error error.code": dig(schemaDoc(t, "error"), "properties", "error", "properties", "code", "enum"),
		"event code":       dig(schemaDoc(t, "event"), "properties", "code", "enum"),
	} {
		if got, _ := enum.([]any); !slices.Equal(got, want) {
			t.Errorf("%s is %v, want %v", where, got, want)
		}
	}
}

// dig follows keys down nested JSON objects; nil when one is missing.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}
