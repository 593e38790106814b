// Command gen writes serve/client/ops_gen.go, the client's method for each
// op and its Request, from the manifest's op and request field tables:
// `go generate ./serve/client` runs it, and its test fails when the file
// differs from what it writes.
//
// Request has a field for each request field but id and op (which the
// client sets itself), named as goName names it: a string, or []byte for
// value, the secret of a write (as a result's value is a Secret).
// appendRequest writes them onto the line in the table's order, a string
// when it is not empty and value when it is not nil; badUTF8 names the
// first that is not UTF-8. A raw field other than id is refused: the
// client has no way to send it.
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

// tables is what the client is generated from: the manifest's op and
// request field tables, and each op's result schema.
type tables struct {
	ops    []manifest.OpSpec
	fields []manifest.Field
	result func(op string) (map[string]any, error)
}

// manifestTables is this build's manifest.
func manifestTables() tables {
	return tables{ops: manifest.Ops(), fields: manifest.RequestFields(), result: resultSchema}
}

// secretField is the request field that carries a secret, held in bytes.
const secretField = "value"

func main() {
	dir := "."
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	src, err := generate(dir, manifestTables())
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

// generate returns ops_gen.go for the client in dir, from t.
func generate(dir string, t tables) ([]byte, error) {
	types, err := resultTypes(dir)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	g := &structs{imports: map[string]bool{"context": true}}
	if err := request(&b, t); err != nil {
		return nil, err
	}
	var verdicts []string // the result types that carry the PDP's verdict
	for _, o := range t.ops {
		name := exported(o.Name)
		rt, ok := types[o.Name]
		delete(types, o.Name)
		typ := rt.name
		schema, err := t.result(o.Name)
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
		if req := sendable(t.fields, o.Needs); len(req) > 0 {
			doc += fmt.Sprintf(" It needs %s.", fields(req))
		}
		if opt := sendable(t.fields, (common(t.fields)|o.Accepts)&^o.Needs); len(opt) > 0 {
			doc += fmt.Sprintf(" It may have %s.", fields(opt))
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
	head.WriteString("// Code generated by serve/client/internal/gen from the manifest's op and request field tables; DO NOT EDIT.\n")
	head.WriteString("// Run go generate ./serve/client after changing manifest/ops.go.\n\npackage client\n\nimport (\n")
	g.imports["unicode/utf8"] = true
	for _, imp := range slices.Sorted(maps.Keys(g.imports)) {
		fmt.Fprintf(&head, "\t%q\n", imp)
	}
	head.WriteString(")\n")
	head.Write(b.Bytes())
	return format.Source(head.Bytes())
}

// fields names the Request fields of request fields fs, as r.Ref and r.Env.
func fields(fs []manifest.Field) string {
	var out []string
	for _, f := range fs {
		out = append(out, "r."+goName(f.Name))
	}
	if len(out) == 1 {
		return out[0]
	}
	return strings.Join(out[:len(out)-1], ", ") + " and " + out[len(out)-1]
}

// own is the request fields the client sets itself, never a Request.
const own = manifest.FieldID | manifest.FieldOp

// sendable is the fields of table in s that a Request carries, in the
// table's order.
func sendable(table []manifest.Field, s manifest.FieldSet) []manifest.Field {
	var out []manifest.Field
	for _, f := range table {
		if s&f.Bit != 0 && f.Bit&own == 0 {
			out = append(out, f)
		}
	}
	return out
}

// common is every field of table each op accepts.
func common(table []manifest.Field) manifest.FieldSet {
	var s manifest.FieldSet
	for _, f := range table {
		if f.Common {
			s |= f.Bit
		}
	}
	return s
}

// request writes Request, badUTF8 and appendRequest from t's field table.
func request(b *bytes.Buffer, t tables) error {
	var all manifest.FieldSet
	for _, f := range t.fields {
		all |= f.Bit
	}
	send := sendable(t.fields, all)
	for _, f := range send {
		if f.Raw {
			return fmt.Errorf("request field %q takes any JSON value: Request has no way to carry one", f.Name)
		}
	}
	// Which ops need and may have each field, for its comment.
	needs := map[string][]string{}
	for _, o := range t.ops {
		for _, f := range sendable(t.fields, o.Needs) {
			needs[f.Name] = append(needs[f.Name], o.Name)
		}
	}
	b.WriteString(comment("Request is what a call sends beside its op: all optional. A string left empty is not sent; " +
		goName(secretField) + ", a secret, is sent when it is not nil (an empty one is serve's to refuse)."))
	b.WriteString("type Request struct {\n")
	for _, f := range send {
		typ, note := "string", ""
		if f.Name == secretField {
			typ, note = "[]byte", "a secret"
		}
		if ops := needs[f.Name]; len(ops) > 0 {
			note = strings.TrimPrefix(note+"; needed by "+join(ops), "; ")
		}
		if note != "" {
			note = " // " + note
		}
		fmt.Fprintf(b, "\t%s %s%s\n", goName(f.Name), typ, note)
	}
	b.WriteString("}\n")
	b.WriteString(comment("badUTF8 names the first field of r that is not valid UTF-8, \"\" when they all are."))
	b.WriteString("func badUTF8(r Request) string {\n\tswitch {\n")
	for _, f := range send {
		valid := "utf8.ValidString"
		if f.Name == secretField {
			valid = "utf8.Valid"
		}
		fmt.Fprintf(b, "\tcase !%s(r.%s):\n\t\treturn %q\n", valid, goName(f.Name), f.Name)
	}
	b.WriteString("\t}\n\treturn \"\"\n}\n")
	b.WriteString(comment("appendRequest appends the request line, field by field: no reflection on the hot path."))
	b.WriteString("func appendRequest(b, id []byte, op string, r Request) []byte {\n")
	b.WriteString("\tb = append(append(append(b, `{\"id\":`...), id...), `,\"op\":`...)\n\tb = appendString(b, op)\n")
	for _, f := range send {
		set := fmt.Sprintf("r.%s != \"\"", goName(f.Name))
		if f.Name == secretField {
			set = fmt.Sprintf("r.%s != nil", goName(f.Name))
		}
		fmt.Fprintf(b, "\tif %s {\n\t\tb = append(b, `,%q:`...)\n\t\tb = appendString(b, r.%s)\n\t}\n", set, f.Name, goName(f.Name))
	}
	b.WriteString("\treturn append(b, '}', '\\n')\n}\n")
	return nil
}

// join is names as English: "a", "a and b", "a, b and c".
func join(names []string) string {
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
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
