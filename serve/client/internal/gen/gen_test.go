package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/manifest"
)

// TestGenerated: ops_gen.go and request_gen.go are what the generator
// writes from today's op table; run `go generate ./serve/client` when
// they are not.
func TestGenerated(t *testing.T) {
	dir := filepath.Join("..", "..")
	files, err := generate(dir, manifestTables())
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[target] == nil || files[requestTarget] == nil {
		t.Fatalf("the generator writes %d files", len(files))
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what the generator writes: run go generate ./serve/client", name)
		}
	}
}

// joined is the generated files, one after the other, for a test that
// looks for what they hold.
func joined(files map[string][]byte) string {
	return string(files[requestTarget]) + string(files[target])
}

// TestDeclarations: the generator binds an op to the type that says it is
// its result, gives an op with none a map, and refuses what it cannot
// write right.
func TestDeclarations(t *testing.T) {
	gen := func(src string) (string, error) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "types.go"), []byte("package client\n\n"+src), 0o644); err != nil {
			t.Fatal(err)
		}
		files, err := generate(dir, manifestTables())
		return joined(files), err
	}
	out, err := gen("// Got is the result of get.\ntype Got struct{ Policy *Policy }\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"func (c *Client) Get(ctx context.Context, r Request) (Got, error) {",
		"func (c *Client) Put(ctx context.Context, r Request) (PutResult, error) {",
		"type PutResult struct {",
		"CreatedAt time.Time `json:\"created_at\"`",
		"Policy *Policy `json:\"-\"`",
		"type ListRecord struct {",
		"Records []ListRecord `json:\"records\"`",
		"PDPConfigured bool `json:\"pdp_configured\"`",
		"func (c *Client) Shutdown(ctx context.Context) error {",
		"case *Got: r.Policy = p",
	} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	for src, why := range map[string]string{
		"// Got is the result of get.\ntype Got struct{ Value string }\n":                                          "no Policy field",
		"// Nope is the result of nope.\ntype Nope struct{}\n":                                                     "not an op",
		"// A is the result of get.\ntype A struct{ Policy int }\n\n// B is the result of get.\ntype B struct{}\n": "both",
	} {
		if _, err := gen(src); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("%q: %v, want an error saying %q", src, err, why)
		}
	}
}

// stub is the few names of package client the generated file uses.
const stub = `package client

import (
	"context"
	"encoding/json"
)

type Client struct{}
type Policy struct{}
type SecretValue struct{}

func Call[T any](context.Context, *Client, string, Request) (T, error) { var v T; return v, nil }

func appendString[S ~string | ~[]byte](b []byte, s S) []byte {
	q, _ := json.Marshal(string(s))
	return append(b, q...)
}

func appendJSON(b []byte, v any) []byte {
	q, _ := json.Marshal(v)
	return append(b, q...)
}

func appendStrings(b []byte, v []string) []byte              { return appendJSON(b, v) }
func appendStringMap(b []byte, v map[string]string) []byte    { return appendJSON(b, v) }
func appendStringsMap(b []byte, v map[string][]string) []byte { return appendJSON(b, v) }
func appendUints(b []byte, v []uint64) []byte                 { return appendJSON(b, v) }
func validStrings([]string) bool                              { return true }
func validStringMap(map[string]string) bool                   { return true }
func validStringsMap(map[string][]string) bool                { return true }
`

// inModule writes files into a module of their own in a fresh directory
// and runs go with args there.
func inModule(t *testing.T, files map[string]string, args ...string) {
	t.Helper()
	dir := t.TempDir()
	files["go.mod"] = "module example.com/client\n\ngo 1.24\n"
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s of the generated file: %v\n%s\n%s", strings.Join(args, " "), err, b, files[target])
	}
}

// TestWrittenTypesCompile: with no result type declared, what the generator
// writes for every op compiles, beside the few names of package client it
// uses.
func TestWrittenTypesCompile(t *testing.T) {
	out, err := generate(t.TempDir(), manifestTables())
	if err != nil {
		t.Fatal(err)
	}
	inModule(t, map[string]string{"stub.go": stub, target: string(out[target]), requestTarget: string(out[requestTarget])}, "vet", ".")
}

// TestAddedField: a request field added to the table, with an op that
// needs it, is all the client needs: Request gets the field, the op gets
// its method, and the line the client writes carries the field (checked
// by running what was generated).
func TestAddedField(t *testing.T) {
	tb := manifestTables()
	memo := manifest.Field{Name: "memo", Bit: freeBit(tb), Max: 300}
	tb.fields = append(tb.fields, memo)
	tb.ops = append(tb.ops, manifest.OpSpec{Name: "jot", Needs: memo.Bit})
	tb.result = func(op string) (map[string]any, error) {
		if op == "jot" {
			return map[string]any{"type": "object", "properties": map[string]any{"echo": map[string]any{"type": "string"}}}, nil
		}
		return resultSchema(op)
	}
	files, err := generate(t.TempDir(), tb)
	if err != nil {
		t.Fatal(err)
	}
	out := joined(files)
	for _, want := range []string{"Memo string // needed by jot", "func (c *Client) Jot(ctx context.Context, r Request) (JotResult, error) {", "It needs r.Memo."} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	check := `package client

import (
	"context"
	"testing"
)

func TestNote(t *testing.T) {
	var _ func(*Client, context.Context, Request) (JotResult, error) = (*Client).Jot
	got := string(appendRequest(nil, []byte("7"), "jot", Request{Memo: "a \"memo\"", Env: "e"}))
	if want := ` + "`" + `{"id":7,"op":"jot","env":"e","memo":"a \"memo\""}` + "`" + ` + "\n"; got != want {
		t.Errorf("the line is %s, want %s", got, want)
	}
	if bad := badUTF8(Request{Memo: "\xff"}); bad != "memo" {
		t.Errorf("badUTF8 of a memo that is not UTF-8 = %q", bad)
	}
}
`
	inModule(t, map[string]string{"stub.go": stub, target: string(files[target]), requestTarget: string(files[requestTarget]), "note_test.go": check}, "test", ".")

	tb.fields = append(tb.fields, manifest.Field{Name: "blob", Bit: freeBit(tb), Max: 10, Raw: true})
	if _, err := generate(t.TempDir(), tb); err == nil || !strings.Contains(err.Error(), `"blob"`) {
		t.Errorf("a raw field the request schema does not describe: %v, want it refused", err)
	}
}

// freeBit is a field bit no field of tb's table has.
func freeBit(tb tables) manifest.FieldSet {
	var all manifest.FieldSet
	for _, f := range tb.fields {
		all |= f.Bit
	}
	bit := manifest.FieldSet(1)
	for all&bit != 0 {
		bit <<= 1
	}
	return bit
}

// TestRawFields: a raw field takes the Go type of what the request schema
// says it holds, and one the client cannot carry is refused, naming it.
func TestRawFields(t *testing.T) {
	str := map[string]any{"type": "string"}
	strs := map[string]any{"type": "array", "items": str}
	for _, c := range []struct {
		schema map[string]any
		want   string // the Go type; "" when refused
	}{
		{strs, "[]string"},
		{map[string]any{"type": "object", "additionalProperties": str}, "map[string]string"},
		{map[string]any{"type": "object", "additionalProperties": strs}, "map[string][]string"},
		{map[string]any{"type": "object", "additionalProperties": map[string]any{"anyOf": []any{strs, str}}}, "map[string][]string"},
		{map[string]any{"type": "object", "additionalProperties": map[string]any{"anyOf": []any{str, map[string]any{"type": "integer"}}}}, ""},
		{map[string]any{"type": "array", "items": map[string]any{"type": "integer"}}, ""},
		{map[string]any{"type": "object"}, ""},
		{map[string]any{"type": "integer"}, ""},
		{map[string]any{"type": "object", "additionalProperties": false, "properties": map[string]any{"n": map[string]any{"type": "integer"}, "max_n": map[string]any{"type": "integer"}}}, "*Blob"},
		{map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}}, ""},
		{map[string]any{"type": "object", "additionalProperties": false, "properties": map[string]any{"n": map[string]any{"type": "integer"}, "s": str}}, ""},
	} {
		tb := manifestTables()
		tb.fields = append(tb.fields, manifest.Field{Name: "blob", Bit: freeBit(tb), Max: 10, Raw: true})
		tb.request = func() (map[string]any, error) {
			s, err := requestSchema()
			s["properties"].(map[string]any)["blob"] = c.schema
			return s, err
		}
		files, err := generate(t.TempDir(), tb)
		out := joined(files)
		switch flat := strings.Join(strings.Fields(out), " "); {
		case c.want == "" && (err == nil || !strings.Contains(err.Error(), `"blob"`)):
			t.Errorf("%v: %v, want it refused naming blob", c.schema, err)
		case c.want != "" && err != nil:
			t.Errorf("%v: %v", c.schema, err)
		case c.want != "" && !strings.Contains(flat, "Blob "+c.want+" // sent when not nil"):
			t.Errorf("%v: no Blob %s in\n%s", c.schema, c.want, out)
		case c.want == "*Blob" && !strings.Contains(flat, "type Blob struct { MaxN int `json:\"max_n,omitempty\"` N int `json:\"n,omitempty\"` }"):
			t.Errorf("%v: no struct Blob of its integers in\n%s", c.schema, out)
		}
	}
}
