package manifest

import (
	"bytes"
	"fmt"
	"io/fs"
	"slices"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaBase is where the tests mount the schemas. Their $ids are bare file
// names, so their relative $refs resolve among the others mounted beside
// them; there is no loader, so a $ref to anything unpublished fails.
const schemaBase = "https://schemas.arca.invalid/arca-serve/1/"

type noLoader struct{}

func (noLoader) Load(url string) (any, error) { return nil, fmt.Errorf("no schema at %s", url) }

// compiler returns a compiler holding every published schema, and the
// decoded documents by file name.
func compiler(t *testing.T) (*jsonschema.Compiler, map[string]map[string]any) {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	c.DefaultDraft(jsonschema.Draft2020)
	docs := map[string]map[string]any{}
	for _, n := range SchemaNames() {
		b, err := Schema(n)
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s is not JSON: %v", n, err)
		}
		obj, ok := doc.(map[string]any)
		if !ok {
			t.Fatalf("%s is not a JSON object", n)
		}
		if err := c.AddResource(schemaBase+n, doc); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		docs[n] = obj
	}
	return c, docs
}

func compile(t *testing.T, c *jsonschema.Compiler, loc string) *jsonschema.Schema {
	t.Helper()
	sch, err := c.Compile(schemaBase + loc)
	if err != nil {
		t.Fatalf("compile %s: %v", loc, err)
	}
	return sch
}

// TestSchemasCompile: every published schema is draft 2020-12, names itself
// by its file name, and compiles; every embedded file is published.
func TestSchemasCompile(t *testing.T) {
	c, docs := compiler(t)
	for _, n := range SchemaNames() {
		if got := docs[n]["$schema"]; got != "https://json-schema.org/draft/2020-12/schema" {
			t.Errorf("%s: $schema is %v, want draft 2020-12", n, got)
		}
		if got := docs[n]["$id"]; got != n {
			t.Errorf("%s: $id is %v, want %q", n, got, n)
		}
		compile(t, c, n)
	}
	embedded, err := fs.Glob(schemaFiles, "schemas/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range embedded {
		if n := p[len("schemas/"):]; !slices.Contains(SchemaNames(), n) {
			t.Errorf("%s is embedded but not in SchemaNames", n)
		}
	}
	if len(embedded) != len(SchemaNames()) {
		t.Errorf("%d schemas embedded, %d published", len(embedded), len(SchemaNames()))
	}
	if _, err := Schema("nope.json"); err == nil {
		t.Error("Schema returned an unpublished file")
	}
}

// TestSchemasMap: Schemas keys every published schema by its bare name.
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
		if got := all[n[:len(n)-len(".json")]]; !bytes.Equal(got, b) {
			t.Errorf("Schemas()[%q] differs from Schema(%q)", n, n)
		}
	}
}

// TestCodesMatchSchemas: the error codes the error response and the audit
// event allow are exactly Codes, in order.
func TestCodesMatchSchemas(t *testing.T) {
	_, docs := compiler(t)
	want := make([]any, 0, len(Codes()))
	for _, c := range Codes() {
		want = append(want, string(c))
	}
	for where, enum := range map[string]any{
		"error.json error.code": dig(docs["error.json"], "properties", "error", "properties", "code", "enum"),
		"event.json code":       dig(docs["event.json"], "properties", "code", "enum"),
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
