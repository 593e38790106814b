package manifest

import (
	"fmt"
	"maps"
	"slices"
)

// fromOps is the keyword by which a schema source asks for a part of it to
// be written from the op table or the request field table, so that each
// table is the one place its facts are written. It is filled in when the
// sources are read, before anything is bundled, and never published. Its
// value is one kind, or a list of kinds filled in that order:
//
//	"enum"        the node's enum is every op's name, in the table's
//	              order, then whatever enum the source gives (the audit
//	              events that are not ops)
//	"properties"  on a request object: a property for each request field
//	              the source does not write itself, a string of at most
//	              Max characters (and at least Min), a boolean for a
//	              Bool field, or an integer from Min to Max for an Int
//	              field; a property the
//	              source writes (id, op) stays as written, and must be a
//	              field of the table
//	"allOf"       on a request object: one if/then rule for each set of
//	              ops that take the same fields, saying which of its
//	              properties they require and which they refuse (any the
//	              op neither requires nor accepts as optional)
const fromOps = "x-from-ops"

// fillFromOps fills in every fromOps keyword under v, in place, from the
// tables ops and fields.
func fillFromOps(v any, ops []OpSpec, fields []Field) error {
	switch n := v.(type) {
	case map[string]any:
		if what, ok := n[fromOps]; ok {
			delete(n, fromOps)
			kinds, ok := what.([]any)
			if !ok {
				kinds = []any{what}
			}
			for _, kind := range kinds {
				var err error
				switch kind {
				case "enum":
					err = opEnum(n, ops)
				case "properties":
					err = fieldProperties(n, fields)
				case "allOf":
					err = opRules(n, ops, fields)
				default:
					err = fmt.Errorf("%s: %v is none of \"enum\", \"properties\" and \"allOf\"", fromOps, kind)
				}
				if err != nil {
					return err
				}
			}
		}
		for _, k := range slices.Sorted(maps.Keys(n)) {
			if err := fillFromOps(n[k], ops, fields); err != nil {
				return err
			}
		}
	case []any:
		for _, sub := range n {
			if err := fillFromOps(sub, ops, fields); err != nil {
				return err
			}
		}
	}
	return nil
}

// fieldProperties gives n a property for each request field the source
// does not write: a string capped at the field's Max, floored at its Min.
// A raw field takes any JSON value, which the source says in its own
// words; a property that names no field is refused.
func fieldProperties(n map[string]any, fields []Field) error {
	props, _ := n["properties"].(map[string]any)
	if props == nil {
		if _, ok := n["properties"]; ok {
			return fmt.Errorf("%s: properties beside it are not an object", fromOps)
		}
		props = map[string]any{}
		n["properties"] = props
	}
	for name := range props {
		if !slices.ContainsFunc(fields, func(f Field) bool { return f.Name == name }) {
			return fmt.Errorf("%s: property %q is no request field", fromOps, name)
		}
	}
	for _, f := range fields {
		if _, written := props[f.Name]; written {
			continue
		}
		if f.Raw {
			return fmt.Errorf("%s: raw field %q takes any JSON value: the source must say what of it", fromOps, f.Name)
		}
		if f.Bool {
			props[f.Name] = map[string]any{"type": "boolean"}
			continue
		}
		if f.Int {
			props[f.Name] = map[string]any{"type": "integer", "minimum": f.Min, "maximum": f.Max}
			continue
		}
		p := map[string]any{"type": "string", "maxLength": f.Max}
		if f.Min > 0 {
			p["minLength"] = f.Min
		}
		props[f.Name] = p
	}
	return nil
}

// opEnum makes n's enum the ops' names followed by the values it had.
func opEnum(n map[string]any, ops []OpSpec) error {
	rest, _ := n["enum"].([]any)
	if _, ok := n["enum"]; ok && rest == nil {
		return fmt.Errorf("%s: the enum beside it is not an array", fromOps)
	}
	enum := make([]any, 0, len(ops)+len(rest))
	for _, o := range ops {
		enum = append(enum, o.Name)
	}
	for _, v := range rest {
		if slices.Contains(enum, v) {
			return fmt.Errorf("%s: %v is an op already", fromOps, v)
		}
		enum = append(enum, v)
	}
	n["enum"] = enum
	return nil
}

// opRules appends to n's allOf the rules of the fields each op takes, one
// rule for the ops that take the same fields, in the order the table first
// names each set. A field an op names must be one of n's properties.
func opRules(n map[string]any, ops []OpSpec, fields []Field) error {
	props, _ := n["properties"].(map[string]any)
	if props == nil {
		return fmt.Errorf("%s: allOf on an object with no properties", fromOps)
	}
	type rule struct {
		required, refused []string
		ops               []any
	}
	var rules []*rule
	for _, o := range ops {
		required := o.Needs.namesIn(fields)
		takes := append(slices.Clip(required), o.optionalIn(fields)...)
		for _, f := range takes {
			if _, ok := props[f]; !ok {
				return fmt.Errorf("%s: op %s takes field %q, which the request does not have", fromOps, o.Name, f)
			}
		}
		var refused []string
		for _, f := range slices.Sorted(maps.Keys(props)) {
			if f != "op" && !slices.Contains(takes, f) {
				refused = append(refused, f)
			}
		}
		key := func(r *rule) bool {
			return slices.Equal(r.required, required) && slices.Equal(r.refused, refused)
		}
		if i := slices.IndexFunc(rules, key); i >= 0 {
			rules[i].ops = append(rules[i].ops, o.Name)
			continue
		}
		rules = append(rules, &rule{required: required, refused: refused, ops: []any{o.Name}})
	}
	all, _ := n["allOf"].([]any)
	for _, r := range rules {
		then := map[string]any{}
		if len(r.required) > 0 {
			then["required"] = strs(r.required)
		}
		switch len(r.refused) {
		case 0:
		case 1:
			then["not"] = map[string]any{"required": strs(r.refused)}
		default:
			var either []any
			for _, f := range r.refused {
				either = append(either, map[string]any{"required": strs([]string{f})})
			}
			then["not"] = map[string]any{"anyOf": either}
		}
		if len(then) == 0 {
			continue // the ops take every field, none required: nothing to say
		}
		all = append(all, map[string]any{
			"if":   map[string]any{"properties": map[string]any{"op": map[string]any{"enum": r.ops}}},
			"then": then,
		})
	}
	if len(all) > 0 {
		n["allOf"] = all
	}
	return nil
}

// strs is ss as a JSON array.
func strs(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
