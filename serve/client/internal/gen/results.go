package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/arca-secrets/arca/manifest"
)

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
	resultOf := regexp.MustCompile(`^([A-Z][A-Za-z0-9]*) is the result of ([a-z]+(?: and [a-z]+)?)[.:]`)
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
			for _, op := range strings.Split(m[2], " and ") {
				if prev, ok := types[op]; ok {
					return nil, fmt.Errorf("both %s and %s say they are the result of %s", prev.name, m[1], op)
				}
				types[op] = resultType{name: m[1], policy: hasField(g.Specs[0].(*ast.TypeSpec), "Policy")}
			}
		}
	}
	return types, nil
}

// topLevel is the object a result schema describes: the schema itself, or
// the definition its top-level $ref names (a shape two ops share).
func topLevel(schema map[string]any) (map[string]any, error) {
	ref, ok := schema["$ref"].(string)
	if !ok {
		return schema, nil
	}
	def, found := strings.CutPrefix(ref, "#/$defs/")
	defs, _ := schema["$defs"].(map[string]any)
	node, _ := defs[def].(map[string]any)
	if !found || node == nil {
		return nil, fmt.Errorf("a $ref outside its schema: %s", ref)
	}
	return node, nil
}

// resultSchema is op's published result schema, decoded.
func resultSchema(op string) (map[string]any, error) { return schema("result." + op) }

// requestSchema is the published request schema, decoded.
func requestSchema() (map[string]any, error) { return schema("request") }

// schema is the published schema called name, decoded.
func schema(name string) (map[string]any, error) {
	b, err := manifest.Schema(name)
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
	if t, ok, err := g.nullable(owner, prop, root, node, top); ok {
		return t, err
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
		if props, _ := node["properties"].(map[string]any); len(props) > 0 {
			sub := strings.TrimSuffix(owner, "Result") + goName(prop)
			if err := g.object(sub, fmt.Sprintf("%s is %s.%s.", sub, owner, goName(prop)), root, node, false, false); err != nil {
				return "", err
			}
			return sub, nil
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

// nullable is the type of a node that is one type or null (anyOf the two,
// as history's current): a pointer to it, nil for null.
func (g *structs) nullable(owner, prop string, root, node map[string]any, top bool) (string, bool, error) {
	either, _ := node["anyOf"].([]any)
	if len(either) != 2 {
		return "", false, nil
	}
	for i, n := range either {
		if m, _ := n.(map[string]any); m != nil && m["type"] == "null" {
			t, err := g.typeOf(owner, prop, root, either[1-i], top)
			return "*" + t, true, err
		}
	}
	return "", false, nil
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
