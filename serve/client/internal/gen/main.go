// Command gen writes serve/client/ops_gen.go, the client's method for each
// op, from the manifest's op table: `go generate ./serve/client` runs it,
// and its test fails when the file differs from what it writes.
//
// Each op gets a method named after it. A meta-op's takes no request
// fields; another's takes a Request, whose fields carry what the op takes
// besides op and id. The result is the type whose doc comment in package
// client says "T is the result of OP."; for an op with none declared the
// generator writes <Op>Result from the op's result schema (structs), and an
// op whose result schema has no properties returns only an error. withPolicy, which puts the PDP's verdict on a result, is
// written here too: on the result of every op that consults the PDP.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/arca-secrets/arca/manifest"
)

// The file the methods go to, in the client's directory.
const target = "ops_gen.go"

// requestField is the Request field that carries request field f, "" for
// none.
func requestField(f string) string {
	switch f {
	case "ref", "value", "env", "actor", "attestation":
		return strings.ToUpper(f[:1]) + f[1:]
	}
	return ""
}

func main() {
	dir := "."
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	src, err := generate(dir)
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, target), src, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// resultType is a type declared as an op's result.
type resultType struct {
	name   string
	policy bool // it has a Policy field
}

// hasField says whether the struct type t has a field called name.
func hasField(t *ast.TypeSpec, name string) bool {
	st, ok := t.Type.(*ast.StructType)
	if !ok {
		return false
	}
	for _, f := range st.Fields.List {
		for _, n := range f.Names {
			if n.Name == name {
				return true
			}
		}
	}
	return false
}

// resultTypes reads, from the client's sources in dir, which type is the
// result of which op.
func resultTypes(dir string) (map[string]resultType, error) {
	fset := token.NewFileSet()
	matches, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	// The doc comment that declares a result type.
	resultOf := regexp.MustCompile(`^([A-Z][A-Za-z0-9]*) is the result of ([a-z]+)[.:]`)
	types := map[string]resultType{}
	for _, path := range matches {
		if strings.HasSuffix(path, "_test.go") || filepath.Base(path) == target {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE || g.Doc == nil || len(g.Specs) != 1 {
				continue
			}
			m := resultOf.FindStringSubmatch(g.Doc.Text())
			if m == nil || m[1] != g.Specs[0].(*ast.TypeSpec).Name.Name {
				continue
			}
			if prev, ok := types[m[2]]; ok {
				return nil, fmt.Errorf("both %s and %s say they are the result of %s", prev.name, m[1], m[2])
			}
			types[m[2]] = resultType{name: m[1], policy: hasField(g.Specs[0].(*ast.TypeSpec), "Policy")}
		}
	}
	return types, nil
}

// generate returns ops_gen.go for the client in dir.
func generate(dir string) ([]byte, error) {
	types, err := resultTypes(dir)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	g := &structs{imports: map[string]bool{"context": true}}
	var verdicts []string // the result types that carry the PDP's verdict
	for _, o := range manifest.Ops() {
		name := exported(o.Name)
		rt, ok := types[o.Name]
		delete(types, o.Name)
		typ := rt.name
		schema, err := resultSchema(o.Name)
		if err != nil {
			return nil, err
		}
		props, _ := schema["properties"].(map[string]any)
		empty := len(props) == 0
		if !ok && !empty {
			typ = name + "Result"
			if err := g.object(typ, fmt.Sprintf("%s is the result of %s, as its schema says.", typ, o.Name), schema, schema, o.ConsultsPDP, true); err != nil {
				return nil, fmt.Errorf("result of %s: %w", o.Name, err)
			}
			rt.policy = o.ConsultsPDP
		}
		if o.ConsultsPDP && !empty {
			if !rt.policy {
				return nil, fmt.Errorf("%s, the result of %s, has no Policy field for the verdict of the PDP the op consults", typ, o.Name)
			}
			verdicts = append(verdicts, typ)
		}
		if !ok && empty {
			typ = "struct{}"
		}
		doc := fmt.Sprintf("%s sends %s", name, o.Name)
		if o.Meta {
			b.WriteString(comment(doc + ", a meta-op: it takes no request fields and serve consults no PDP for it."))
			if typ == "struct{}" {
				fmt.Fprintf(&b, "func (c *Client) %s(ctx context.Context) error {\n\t_, err := Call[struct{}](ctx, c, %q, Request{})\n\treturn err\n}\n", name, o.Name)
				continue
			}
			fmt.Fprintf(&b, "func (c *Client) %s(ctx context.Context) (%s, error) {\n\treturn Call[%s](ctx, c, %q, Request{})\n}\n", name, typ, typ, o.Name)
			continue
		}
		doc += "."
		if req := o.Required(); len(req) > 0 {
			f, err := fields(req)
			if err != nil {
				return nil, fmt.Errorf("op %s: %w", o.Name, err)
			}
			doc += fmt.Sprintf(" It needs %s.", f)
		}
		var opt []string
		for _, f := range o.Optional() {
			if f != "id" {
				opt = append(opt, f)
			}
		}
		if len(opt) > 0 {
			f, err := fields(opt)
			if err != nil {
				return nil, fmt.Errorf("op %s: %w", o.Name, err)
			}
			doc += fmt.Sprintf(" It may have %s.", f)
		}
		if o.ConsultsPDP {
			doc += " serve consults the PDP for it: the verdict is on the result's Policy."
		}
		b.WriteString(comment(doc))
		fmt.Fprintf(&b, "func (c *Client) %s(ctx context.Context, r Request) (%s, error) {\n\treturn Call[%s](ctx, c, %q, r)\n}\n", name, typ, typ, o.Name)
	}
	for op, rt := range types {
		return nil, fmt.Errorf("%s says it is the result of %s, which is not an op", rt.name, op)
	}
	b.WriteString(comment("withPolicy puts the verdict of a success on its result: the result of each op that consults the PDP has a Policy."))
	b.WriteString("func withPolicy[T any](r *T, p *Policy) {\n\tswitch r := any(r).(type) {\n")
	for _, t := range verdicts {
		fmt.Fprintf(&b, "\tcase *%s:\n\t\tr.Policy = p\n", t)
	}
	b.WriteString("\t}\n}\n")
	b.WriteString(g.out.String())
	var head bytes.Buffer
	head.WriteString("// Code generated by serve/client/internal/gen from the manifest's op table; DO NOT EDIT.\n")
	head.WriteString("// Run go generate ./serve/client after changing manifest/ops.go.\n\npackage client\n\nimport (\n")
	for _, imp := range slices.Sorted(maps.Keys(g.imports)) {
		fmt.Fprintf(&head, "\t%q\n", imp)
	}
	head.WriteString(")\n")
	head.Write(b.Bytes())
	return format.Source(head.Bytes())
}

// fields names the Request fields of request fields fs, as r.Ref and r.Env.
func fields(fs []string) (string, error) {
	var out []string
	for _, f := range fs {
		rf := requestField(f)
		if rf == "" {
			return "", fmt.Errorf("request field %q has no field in Request: add one, and send it in appendRequest", f)
		}
		out = append(out, "r."+rf)
	}
	switch len(out) {
	case 1:
		return out[0], nil
	case 2:
		return out[0] + " and " + out[1], nil
	}
	return strings.Join(out[:len(out)-1], ", ") + " and " + out[len(out)-1], nil
}

// resultSchema is op's published result schema, decoded.
func resultSchema(op string) (map[string]any, error) {
	b, err := manifest.Schema("result." + op)
	if err != nil {
		return nil, err
	}
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	return s, nil
}

// structs writes the result types of the ops that have none declared, from
// their schemas: a field for each property, in name order, typed as the
// schema says (a $ref to the time definition is a time.Time, a top-level
// value a SecretValue, an object in an array a type of its own), and a
// Policy when the op consults the PDP.
type structs struct {
	out     bytes.Buffer
	imports map[string]bool
}

func (g *structs) object(name, doc string, root, node map[string]any, policy, top bool) error {
	props, _ := node["properties"].(map[string]any)
	var body bytes.Buffer
	for _, p := range slices.Sorted(maps.Keys(props)) {
		t, err := g.typeOf(name, p, root, props[p], top)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		fmt.Fprintf(&body, "\t%s %s `json:%q`\n", goName(p), t, p)
	}
	if policy {
		body.WriteString("\tPolicy *Policy `json:\"-\"`\n")
	}
	g.out.WriteString(comment(doc))
	fmt.Fprintf(&g.out, "type %s struct {\n%s}\n", name, body.String())
	return nil
}

func (g *structs) typeOf(owner, prop string, root map[string]any, v any, top bool) (string, error) {
	node, ok := v.(map[string]any)
	if !ok {
		return "any", nil // true: anything
	}
	if ref, ok := node["$ref"].(string); ok {
		def, found := strings.CutPrefix(ref, "#/$defs/")
		defs, _ := root["$defs"].(map[string]any)
		if !found || defs[def] == nil {
			return "", fmt.Errorf("a $ref outside its schema: %s", ref)
		}
		if def == "time" {
			g.imports["time"] = true
			return "time.Time", nil
		}
		node = defs[def].(map[string]any)
	}
	if c, ok := node["const"]; ok {
		return constType(c)
	}
	if e, ok := node["enum"].([]any); ok && len(e) > 0 {
		return constType(e[0])
	}
	switch node["type"] {
	case "string":
		if top && prop == "value" {
			return "SecretValue", nil
		}
		return "string", nil
	case "integer":
		return "int64", nil
	case "number":
		return "float64", nil
	case "boolean":
		return "bool", nil
	case "array":
		items, _ := node["items"].(map[string]any)
		if items != nil && items["type"] == "object" && items["properties"] != nil {
			item := strings.TrimSuffix(owner, "Result") + goName(strings.TrimSuffix(prop, "s"))
			if err := g.object(item, fmt.Sprintf("%s is an entry of %s.%s.", item, owner, goName(prop)), root, items, false, false); err != nil {
				return "", err
			}
			return "[]" + item, nil
		}
		t, err := g.typeOf(owner, prop, root, node["items"], false)
		return "[]" + t, err
	case "object":
		if node["properties"] != nil && len(node["properties"].(map[string]any)) > 0 {
			return "", fmt.Errorf("a nested object is not supported")
		}
		if extra, ok := node["additionalProperties"].(map[string]any); ok {
			t, err := g.typeOf(owner, prop, root, extra, false)
			return "map[string]" + t, err
		}
		return "map[string]any", nil
	case nil:
		return "any", nil
	}
	return "", fmt.Errorf("type %v is not supported", node["type"])
}

// constType is the Go type of a const or enum value.
func constType(v any) (string, error) {
	switch v.(type) {
	case string:
		return "string", nil
	case bool:
		return "bool", nil
	case float64:
		return "int64", nil
	}
	return "", fmt.Errorf("a const or enum of %T is not supported", v)
}

// goName is a JSON name as a Go field name: "created_at" is CreatedAt,
// "pdp_configured" PDPConfigured.
func goName(s string) string {
	var out string
	for _, w := range strings.Split(s, "_") {
		switch w {
		case "id", "pdp", "cli", "url", "ttl":
			out += strings.ToUpper(w)
		case "":
		default:
			out += strings.ToUpper(w[:1]) + w[1:]
		}
	}
	return out
}

// comment is text as a doc comment, after a blank line, its lines broken
// at spaces before column 77.
func comment(text string) string {
	out, line := "\n//", ""
	for _, w := range strings.Fields(text) {
		if line != "" && len(line)+1+len(w) > 73 {
			out += " " + line + "\n//"
			line = w
			continue
		}
		line = strings.TrimPrefix(line+" "+w, " ")
	}
	return out + " " + line + "\n"
}

// exported is op's method name: "get" is Get.
func exported(op string) string {
	return strings.ToUpper(op[:1]) + op[1:]
}
