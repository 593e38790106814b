package main

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/arca-secrets/arca/manifest"
)

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
	schema, err := t.request()
	if err != nil {
		return err
	}
	props, _ := schema["properties"].(map[string]any)
	raws := map[string]rawKind{}
	for _, f := range send {
		if f.Raw {
			k, err := rawKindOf(f.Name, props[f.Name])
			if err != nil {
				return fmt.Errorf("request field %q takes any JSON value: %w", f.Name, err)
			}
			raws[f.Name] = k
		}
	}
	// Which ops need and may have each field, for its comment.
	needs := map[string][]string{}
	for _, o := range t.ops {
		for _, f := range sendable(t.fields, o.Needs) {
			needs[f.Name] = append(needs[f.Name], o.Name)
		}
	}
	b.WriteString(comment("Request is what a call sends beside its op: all optional. A string left empty is not sent, but to an op that needs it; " +
		goName(secretField) + ", a secret, is sent when it is not nil (an empty one is serve's to refuse)."))
	b.WriteString("type Request struct {\n")
	for _, f := range send {
		typ, note := "string", ""
		switch {
		case f.Name == secretField:
			typ, note = "[]byte", "a secret"
		case f.Bool:
			typ, note = "*bool", "sent when not nil"
		case f.Int:
			typ, note = "*uint64", "sent when not nil"
		case f.Raw:
			typ, note = raws[f.Name].typ, "sent when not nil"
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
	for _, f := range send {
		if k := raws[f.Name]; k.ints != nil {
			intObject(b, f.Name, k)
		}
	}
	b.WriteString(comment("badUTF8 names the first field of r that is not valid UTF-8, \"\" when they all are."))
	b.WriteString("func badUTF8(r Request) string {\n\tswitch {\n")
	for _, f := range send {
		if f.Bool || f.Int || raws[f.Name].ints != nil || raws[f.Name].numbers {
			continue // nothing of it is a string
		}
		valid := "utf8.ValidString"
		switch {
		case f.Name == secretField:
			valid = "utf8.Valid"
		case f.Raw:
			valid = "valid" + raws[f.Name].helper
		}
		fmt.Fprintf(b, "\tcase !%s(r.%s):\n\t\treturn %q\n", valid, goName(f.Name), f.Name)
	}
	b.WriteString("\t}\n\treturn \"\"\n}\n")
	b.WriteString(comment("appendRequest appends the request line, field by field: no reflection on the hot path."))
	b.WriteString("func appendRequest(b, id []byte, op string, r Request) []byte {\n")
	b.WriteString("\tb = append(append(append(b, `{\"id\":`...), id...), `,\"op\":`...)\n\tb = appendString(b, op)\n")
	for _, f := range send {
		if f.Bool {
			fmt.Fprintf(b, "\tif r.%s != nil {\n\t\tb = append(b, `,%q:`...)\n\t\tb = strconv.AppendBool(b, *r.%s)\n\t}\n", goName(f.Name), f.Name, goName(f.Name))
			continue
		}
		if f.Int {
			fmt.Fprintf(b, "\tif r.%s != nil {\n\t\tb = append(b, `,%q:`...)\n\t\tb = strconv.AppendUint(b, *r.%s, 10)\n\t}\n", goName(f.Name), f.Name, goName(f.Name))
			continue
		}
		set, appendFn := fmt.Sprintf("r.%s != \"\"", goName(f.Name)), "appendString"
		if f.Name == secretField || f.Raw {
			set = fmt.Sprintf("r.%s != nil", goName(f.Name))
		}
		if f.Raw {
			appendFn = "append" + raws[f.Name].helper
		}
		for _, op := range needs[f.Name] {
			set += fmt.Sprintf(" || op == %q", op) // sent even when empty, so serve can say so
		}
		fmt.Fprintf(b, "\tif %s {\n\t\tb = append(b, `,%q:`...)\n\t\tb = %s(b, r.%s)\n\t}\n", set, f.Name, appendFn, goName(f.Name))
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

// rawKind is how Request carries a raw request field: its Go type, and the
// name the client's helpers for it end with (appendStrings, validStrings).
// ints, for an object of integers, is its properties in name order: the
// generated file declares its struct and appender itself.
type rawKind struct {
	typ, helper string
	ints        []string
	numbers     bool // an array of integers: nothing of it is text
}

// rawKindOf is the rawKind of the raw field name whose request schema is
// node: an array of strings, an object of strings, an object of strings or
// arrays of strings (sent as arrays, which the schema takes for either),
// an array of integers of 0 or more, or an object of named integers and
// nothing else (a struct of its own,
// named after the field). Any other value is refused: Request has no way
// to carry it.
func rawKindOf(name string, node any) (rawKind, error) {
	n, _ := node.(map[string]any)
	switch {
	case n == nil:
		return rawKind{}, fmt.Errorf("the request schema does not say what of it")
	case isStrings(n):
		return rawKind{typ: "[]string", helper: "Strings"}, nil
	case n["type"] == "array" && isInteger(n["items"]):
		return rawKind{typ: "[]uint64", helper: "Uints", numbers: true}, nil
	case n["type"] != "object":
		return rawKind{}, fmt.Errorf("Request has no way to carry a %v", n["type"])
	}
	if props, _ := n["properties"].(map[string]any); len(props) > 0 && n["additionalProperties"] == false {
		for _, p := range props {
			if m, _ := p.(map[string]any); m == nil || m["type"] != "integer" {
				return rawKind{}, fmt.Errorf("Request has no way to carry an object of anything but integers")
			}
		}
		return rawKind{typ: "*" + goName(name), helper: goName(name), ints: slices.Sorted(maps.Keys(props))}, nil
	}
	extra, _ := n["additionalProperties"].(map[string]any)
	switch {
	case extra == nil:
	case isString(extra):
		return rawKind{typ: "map[string]string", helper: "StringMap"}, nil
	case isStrings(extra):
		return rawKind{typ: "map[string][]string", helper: "StringsMap"}, nil
	default:
		either, _ := extra["anyOf"].([]any)
		if len(either) == 2 && slices.ContainsFunc(either, isString) && slices.ContainsFunc(either, isStrings) {
			return rawKind{typ: "map[string][]string", helper: "StringsMap"}, nil
		}
	}
	return rawKind{}, fmt.Errorf("Request has no way to carry an object of anything but strings or arrays of strings")
}

// intObject writes the struct of the object-of-integers field name, and
// its appender: each integer is sent when it is not zero, in name order.
func intObject(b *bytes.Buffer, name string, k rawKind) {
	typ := goName(name)
	b.WriteString(comment(fmt.Sprintf("%s is what Request.%s carries, as the request schema says: an object of integers, each sent when it is not zero.", typ, typ)))
	fmt.Fprintf(b, "type %s struct {\n", typ)
	for _, p := range k.ints {
		fmt.Fprintf(b, "\t%s int `json:\"%s,omitempty\"`\n", goName(p), p)
	}
	b.WriteString("}\n")
	b.WriteString(comment(fmt.Sprintf("append%s appends s as a JSON object.", typ)))
	fmt.Fprintf(b, "func append%s(b []byte, s *%s) []byte {\n\tb = append(b, '{')\n\tn := len(b)\n", typ, typ)
	for _, p := range k.ints {
		fmt.Fprintf(b, "\tif s.%s != 0 {\n\t\tif len(b) > n {\n\t\t\tb = append(b, ',')\n\t\t}\n\t\tb = strconv.AppendInt(append(b, `%q:`...), int64(s.%s), 10)\n\t}\n", goName(p), p, goName(p))
	}
	b.WriteString("\treturn append(b, '}')\n}\n")
}

// isString says whether schema node n is a string.
func isString(n any) bool {
	m, _ := n.(map[string]any)
	return m != nil && m["type"] == "string"
}

// isInteger says whether schema node n is an integer of 0 or more.
func isInteger(n any) bool {
	m, _ := n.(map[string]any)
	return m != nil && m["type"] == "integer" && m["minimum"] != nil
}

// isStrings says whether schema node n is an array of strings.
func isStrings(n any) bool {
	m, _ := n.(map[string]any)
	return m != nil && m["type"] == "array" && isString(m["items"])
}
