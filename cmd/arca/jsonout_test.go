package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/arca-secrets/arca/manifest"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

type noSchemaLoader struct{}

func (noSchemaLoader) Load(url string) (any, error) { return nil, fmt.Errorf("no schema at %s", url) }

// closedResult compiles the closed form of result.OP: what serve writes,
// exactly, which is what the CLI's --json prints too.
func closedResult(t *testing.T, op string) *jsonschema.Schema {
	t.Helper()
	return closedSchema(t, "result."+op)
}

// closedSchema compiles the closed form of the published schema name:
// what serve writes, exactly.
func closedSchema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	b, err := manifest.ClosedSchema(name)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noSchemaLoader{})
	if err := c.AddResource(manifest.SchemaPrefix+name, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(manifest.SchemaPrefix + name)
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// The --json of get, put, rotate, rm, list and check is serve's result of
// the same op: each validates against the closed result schema, and get's
// holds the value, exactly.
func TestJSONIsServesResult(t *testing.T) {
	run := inProcess(t, t.TempDir())
	run("", "init")
	const value = "v\"al\\ue\n\u00e9"
	for _, step := range []struct {
		op, stdin string
		args      []string
	}{
		{"put", value, []string{"put", "--json", "arca://app/db"}},
		{"get", "", []string{"get", "arca://app/db", "--json"}},
		{"rotate", "n3w", []string{"rotate", "--json", "arca://app/db"}},
		{"list", "", []string{"list", "--json"}},
		{"check", "", []string{"check", "--json"}},
		{"rm", "", []string{"rm", "--json", "arca://app/db"}},
	} {
		out := run(step.stdin, step.args...)
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
		if err != nil {
			t.Fatalf("%s --json is not JSON: %v\n%s", step.op, err, out)
		}
		if err := closedResult(t, step.op).Validate(inst); err != nil {
			t.Errorf("%s --json does not validate against result.%s: %v\n%s", step.op, step.op, err, out)
		}
		if step.op == "get" && inst.(map[string]any)["value"] != value {
			t.Errorf("get --json holds the value %q, want %q", inst.(map[string]any)["value"], value)
		}
	}
}

// inProcess runs arca in this process with HOME home and nothing else of
// an environment: run(stdin, args...) returns its stdout, failing t on a
// non-zero exit.
func inProcess(t *testing.T, home string) func(stdin string, args ...string) string {
	return func(stdin string, args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		c := &cli{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb, now: time.Now,
			getenv:  func(k string) string { return map[string]string{"HOME": home}[k] },
			environ: func() []string { return []string{"HOME=" + home} }}
		if st := c.main(context.Background(), args); st != 0 {
			t.Fatalf("arca %s: exit %d: %s", strings.Join(args, " "), st, errb.String())
		}
		return out.String()
	}
}
