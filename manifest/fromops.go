package manifest

import (
	"fmt"
	"maps"
	"slices"
)

// fromOps is the keyword by which a schema source asks for a part of it to
// be written from the op table, so that the table is the one place the ops
// are listed. It is filled in when the sources are read, before anything is
// bundled, and never published:
//
//	"x-from-ops": "enum"   the node's enum is every op's name, in the
//	                       table's order, then whatever enum the source
//	                       gives (the audit events that are not ops)
//	"x-from-ops": "allOf"  on a request object: one if/then rule for each
//	                       set of ops that take the same fields, saying
//	                       which of its properties they require and which
//	                       they refuse (any the op neither requires nor
//	                       accepts as optional)
const fromOps = "x-from-ops"

// fillFromOps fills in every fromOps keyword under v, in place.
func fillFromOps(v any, ops []OpSpec) error {
	switch n := v.(type) {
	case map[string]any:
		if what, ok := n[fromOps]; ok {
			delete(n, fromOps)
			var err error
			switch what {
			case "enum":
				err = opEnum(n, ops)
			case "allOf":
				err = opRules(n, ops)
			default:
				err = fmt.Errorf("%s: %v is neither \"enum\" nor \"allOf\"", fromOps, what)
			}
			if err != nil {
				return err
			}
		}
		for _, k := range slices.Sorted(maps.Keys(n)) {
			if err := fillFromOps(n[k], ops); err != nil {
				return err
			}
		}
	case []any:
		for _, sub := range n {
			if err := fillFromOps(sub, ops); err != nil {
				return err
			}
		}
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
func opRules(n map[string]any, ops []OpSpec) error {
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
		takes := append(o.Required(), o.Optional()...)
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
			return slices.Equal(r.required, o.Required()) && slices.Equal(r.refused, refused)
		}
		if i := slices.IndexFunc(rules, key); i >= 0 {
			rules[i].ops = append(rules[i].ops, o.Name)
			continue
		}
		rules = append(rules, &rule{required: o.Required(), refused: refused, ops: []any{o.Name}})
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
