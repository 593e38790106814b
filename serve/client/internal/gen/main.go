// Command gen writes serve/client/ops_gen.go and request_gen.go, the
// client's method for each op and its Request, from the manifest's op and
// request field tables: `go generate ./serve/client` runs it, and its test
// fails when a file differs from what it writes.
//
// Request has a field for each request field but id and op (which the
// client sets itself), named as goName names it: a string, or []byte for
// value, the secret of a write (as a result's value is a Secret).
// A raw field other than id takes the Go type of what the request schema
// says it holds: an array of strings is a []string, an object of strings
// a map[string]string, an object of strings or arrays of strings a
// map[string][]string, an object of named integers and nothing else a
// pointer to a struct named after the field (Scope), written here with its
// appender; any other is refused, the client having no way to send it. appendRequest writes them onto the line in the table's order, a
// string when it is not empty, value and a raw field when not nil;
// badUTF8 names the first that is not UTF-8.
//
// Each op gets a method named after it. A meta-op's takes no request
// fields; another's takes a Request, whose fields carry what the op takes
// besides op and id. The result is the type whose doc comment in package
// client says "T is the result of OP." (or "of OP and OP2."); for an op
// with none declared the generator writes <Op>Result from the op's result
// schema (structs), or from the definition its top-level $ref names, and
// an op whose result schema has no properties returns only an error. withPolicy, which puts the PDP's verdict on a result, is
// written here too: on the result of every op that consults the PDP.
package main

import (
	"bytes"
	"fmt"
	"go/format"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/arca-secrets/arca/manifest"
)

// The files the generator writes, in the client's directory: the methods
// and the result types, and the request line (Request and how it is
// written and checked).
const (
	target        = "ops_gen.go"
	requestTarget = "request_gen.go"
)

// tables is what the client is generated from: the manifest's op and
// request field tables, each op's result schema, and the request schema
// (which says what a raw field takes).
type tables struct {
	ops     []manifest.OpSpec
	fields  []manifest.Field
	result  func(op string) (map[string]any, error)
	request func() (map[string]any, error)
}

// manifestTables is this build's manifest.
func manifestTables() tables {
	return tables{ops: manifest.Ops(), fields: manifest.RequestFields(), result: resultSchema, request: requestSchema}
}

// secretField is the request field that carries a secret, held in bytes.
const secretField = "value"

func main() {
	dir := "."
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	files, err := generate(dir, manifestTables())
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, name), files[name], 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// generate returns the files of the client in dir, by name, from t.
func generate(dir string, t tables) (map[string][]byte, error) {
	types, err := resultTypes(dir)
	if err != nil {
		return nil, err
	}
	var b, rb bytes.Buffer
	g := &structs{imports: map[string]bool{"context": true}}
	if err := request(&rb, t); err != nil {
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
		node, err := topLevel(schema)
		if err != nil {
			return nil, fmt.Errorf("result of %s: %w", o.Name, err)
		}
		props, _ := node["properties"].(map[string]any)
		empty := len(props) == 0
		if !ok && !empty {
			typ = name + "Result"
			if err := g.object(typ, fmt.Sprintf("%s is the result of %s, as its schema says.", typ, o.Name), schema, node, o.ConsultsPDP, true); err != nil {
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
	ops, err := source(b.Bytes(), g.imports)
	if err != nil {
		return nil, err
	}
	req, err := source(rb.Bytes(), map[string]bool{"unicode/utf8": true})
	if err != nil {
		return nil, err
	}
	return map[string][]byte{target: ops, requestTarget: req}, nil
}

// source is a generated file of package client: its header, the imports
// (strconv added when body uses it) and body, formatted.
func source(body []byte, imports map[string]bool) ([]byte, error) {
	var head bytes.Buffer
	head.WriteString("// Code generated by serve/client/internal/gen from the manifest's op and request field tables; DO NOT EDIT.\n")
	head.WriteString("// Run go generate ./serve/client after changing manifest/ops.go.\n\npackage client\n\nimport (\n")
	if bytes.Contains(body, []byte("strconv.")) {
		imports["strconv"] = true
	}
	for _, imp := range slices.Sorted(maps.Keys(imports)) {
		fmt.Fprintf(&head, "\t%q\n", imp)
	}
	head.WriteString(")\n")
	head.Write(body)
	return format.Source(head.Bytes())
}
