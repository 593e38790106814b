package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/age"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/arca-secrets/arca/internal/schemaof"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/access"
	"github.com/arca-secrets/arca/ops/deploy"
)

// jsonDoc is one JSON output of a verb and where its schema comes from:
// serve's published schema of that name (arca schema NAME), the type that
// prints it (schemaof derives the schema), or a schema written out.
type jsonDoc struct {
	output string // the verb and the flag that asks for JSON
	serve  string
	value  any
	schema string
}

// The outputs of no Go type of their own: a map printed by its names.
const (
	valuesSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "title": "arca env --format json",
  "description": "each variable's name and value, keys sorted; the values are the secrets",
  "type": "object",
  "additionalProperties": {"type": "string"}
}`
	exportSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "title": "arca export --format json",
  "description": "namespace, then name, then value; with --ns, one namespace's names and values",
  "type": "object",
  "additionalProperties": {
    "anyOf": [
      {"type": "string"},
      {"type": "object", "additionalProperties": {"type": "string"}}
    ]
  }
}`
	mergeSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "title": "arca audit --merge --json",
  "description": "one line per event, in time order; event is the trail's line, as arca schema event describes it",
  "type": "object",
  "required": ["file", "line", "event"],
  "properties": {
    "file": {"type": "string"},
    "line": {"type": "integer", "minimum": 1},
    "event": {"type": "object"}
  },
  "additionalProperties": false
}`
)

// jsonDocs are every JSON output of the CLI.
func jsonDocs() []jsonDoc {
	var docs []jsonDoc
	for _, op := range []string{"get", "put", "rotate", "rm", "list", "check", "history", "rollback", "undelete", "destroy", "changes"} {
		docs = append(docs, jsonDoc{output: op + " --json", serve: "result." + op})
	}
	return append(docs,
		jsonDoc{output: "audit --json", serve: "event"},
		jsonDoc{output: "audit --merge --json", schema: mergeSchema},
		jsonDoc{output: "init --json", value: initJSON{}},
		jsonDoc{output: "version --json", value: versionJSON{}},
		jsonDoc{output: "status --json", value: ops.StatusResult{}},
		jsonDoc{output: "identity --json", value: ops.IdentityResult{}},
		jsonDoc{output: "identity rotate --json", value: access.IdentityRotation{}},
		jsonDoc{output: "migrate --json", value: bulkJSON{}},
		jsonDoc{output: "vault restore --json", value: bulkJSON{}},
		jsonDoc{output: "vault recipients list --json", value: teamJSON{}},
		jsonDoc{output: "vault recipients add --json", value: teamJSON{}},
		jsonDoc{output: "vault recipients rm --json", value: teamJSON{}},
		jsonDoc{output: "vault rekey --json", value: teamJSON{}},
		jsonDoc{output: "deploy --json", schema: deploy.ReportSchema},
		jsonDoc{output: "env --format json", schema: valuesSchema},
		jsonDoc{output: "export --format json", schema: exportSchema},
	)
}

// text is d's schema as the docs show it.
func (d jsonDoc) text(t *testing.T) string {
	t.Helper()
	switch {
	case d.serve != "":
		b, err := manifest.ClosedSchema(d.serve)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	case d.value != nil:
		b, err := schemaof.Of("arca "+d.output, d.value)
		if err != nil {
			t.Fatalf("%s: %v", d.output, err)
		}
		return string(b)
	}
	return strings.TrimSuffix(d.schema, "\n")
}

// compiled is d's schema, compiled.
func (d jsonDoc) compiled(t *testing.T) *jsonschema.Schema {
	t.Helper()
	if d.serve != "" {
		return closedSchema(t, d.serve)
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(d.text(t)))
	if err != nil {
		t.Fatalf("%s: %v", d.output, err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noSchemaLoader{})
	if err := c.AddResource("urn:arca-cli:"+d.output, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("urn:arca-cli:" + d.output)
	if err != nil {
		t.Fatalf("%s: %v", d.output, err)
	}
	return sch
}

// schemaSection is docs/cli.md's section of the schemas, generated.
func schemaSection(t *testing.T) string {
	var b strings.Builder
	b.WriteString(`### JSON schemas

Every JSON output has a JSON Schema (draft 2020-12). Those that are
serve's results, or its audit events, are the schemas ` + "`arca schema NAME`" + `
prints; the others are below, each read off the Go type that prints it
or written out beside the code. The test suite holds
every verb's real output to its schema and this section to the code
(` + "`ARCA_UPDATE_DOCS=1 go test ./cmd/arca -run TestJSONSchemasDocumented`" + `
rewrites it). A shape only gains fields: read it ignoring those you do
not know.

| output | schema |
| --- | --- |
`)
	docs := jsonDocs()
	for _, d := range docs {
		where := "below"
		if d.serve != "" {
			where = "`arca schema " + d.serve + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s |\n", d.output, where)
	}
	for _, d := range docs {
		if d.serve != "" {
			continue
		}
		fmt.Fprintf(&b, "\n#### %s\n\n<!-- json-schema: %s -->\n```json\n%s\n```\n", d.output, d.output, d.text(t))
	}
	return b.String()
}

// Every JSON output of the command tree (--json, --format json) has a
// schema, and docs/cli.md shows each as the code has it.
func TestJSONSchemasDocumented(t *testing.T) {
	listed := map[string]bool{}
	for _, d := range jsonDocs() {
		listed[strings.TrimSuffix(strings.TrimSuffix(d.output, " --json"), " --format json")] = true
	}
	c := &cli{}
	commands().walk(func(path string, cmd *command) {
		c.flagSet(path, cmd).VisitAll(func(f *flag.Flag) {
			if (f.Name == "json" || f.Name == "format" && strings.Contains(f.Usage, "json")) && !listed[path] {
				t.Errorf("arca %s --%s prints JSON, and no schema is documented for it", path, f.Name)
			}
		})
	})

	const doc = "../../docs/cli.md"
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "### JSON schemas\n")
	if start < 0 {
		t.Fatal("docs/cli.md has no ### JSON schemas section")
	}
	end := strings.Index(text[start+1:], "\n### ")
	if end < 0 {
		t.Fatal("docs/cli.md: no section after ### JSON schemas")
	}
	end += start + 2
	want := schemaSection(t)
	if text[start:end] == want {
		return
	}
	if os.Getenv("ARCA_UPDATE_DOCS") == "1" {
		if err := os.WriteFile(doc, []byte(text[:start]+want+text[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/cli.md's JSON schemas are not the code's: run ARCA_UPDATE_DOCS=1 go test ./cmd/arca -run TestJSONSchemasDocumented")
}

// The real output of each CLI-only JSON output validates against its
// schema (serve's results are held to theirs by TestJSONIsServesResult).
func TestJSONOutputsValidate(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	run := inProcess(t, home)
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	key := id.Recipient().String()
	backup := filepath.Join(dir, "backup.vault")
	outputs := map[string][]string{"init --json": {run("", "init", "--json")}}
	run("v4lue", "put", "arca://app/db")
	outputs["version --json"] = []string{run("", "version", "--json")}
	outputs["migrate --json"] = []string{run("", "migrate", "--json", "--from", "dotenv", "--ns", "web", file("web.env", "PORT=8443\nTOKEN=t0k\n"))}
	outputs["vault recipients list --json"] = []string{run("", "vault", "recipients", "list", "--json")}
	outputs["vault recipients add --json"] = []string{run("", "vault", "recipients", "add", "--json", key)}
	outputs["vault recipients rm --json"] = []string{run("", "vault", "recipients", "rm", "--json", key)}
	outputs["vault rekey --json"] = []string{run("", "vault", "rekey", "--json")}
	run("", "vault", "backup", backup)
	outputs["vault restore --json"] = []string{run("", "vault", "restore", "--json", "--overwrite", backup), run("", "vault", "restore", "--json", "--dry-run", backup)}
	outputs["status --json"] = []string{run("", "status", "--json")}
	outputs["identity --json"] = []string{run("", "identity", "--json")}
	outputs["identity rotate --json"] = []string{run("", "identity", "rotate", "--json")}
	tmpl := file("app.tmpl", "pw={{ arca://app/db }}\n")
	outputs["deploy --json"] = []string{run("", "deploy", "--json", "--template", tmpl, "--out", filepath.Join(dir, "app.conf")),
		run("", "deploy", "--json", "--check", "--template", tmpl, "--out", filepath.Join(dir, "app.conf"))}
	outputs["env --format json"] = []string{run("", "env", "--format", "json", "--secret", "DB=arca://app/db")}
	outputs["export --format json"] = []string{run("", "export", "--format", "json"), run("", "export", "--format", "json", "--ns", "web")}
	trail := filepath.Join(home, ".local/state/arca/audit.log")
	outputs["audit --json"] = lines(t, run("", "audit", "--json"))
	copied, err := os.ReadFile(trail) // another machine's trail: a copy
	if err != nil {
		t.Fatal(err)
	}
	other := file("other.log", string(copied))
	outputs["audit --merge --json"] = lines(t, run("", "audit", "--merge", "--json", trail, other))

	for _, d := range jsonDocs() {
		if d.serve != "" && d.output != "audit --json" {
			continue
		}
		got := outputs[d.output]
		if len(got) == 0 {
			t.Errorf("%s: no output of it was validated", d.output)
			continue
		}
		sch := d.compiled(t)
		for _, out := range got {
			inst, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
			if err != nil {
				t.Fatalf("%s is not JSON: %v\n%s", d.output, err, out)
			}
			if err := sch.Validate(inst); err != nil {
				t.Errorf("%s does not validate against its schema: %v\n%s", d.output, err, out)
			}
		}
	}
}

// lines are the lines of out.
func lines(t *testing.T, out string) []string {
	t.Helper()
	var ls []string
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		ls = append(ls, sc.Text())
	}
	return ls
}
