package secretfile

import (
	"encoding/json"
	"fmt"

	"github.com/arca-secrets/arca/ops/ref"
)

// parseJSON reads a top-level object whose values are all secrets (Flat:
// name → value) or all objects of secrets (Nested: namespace → name →
// value). A secret is a string, or a number or boolean taken as its text
// exactly as written ("5432", "1e3", "true"). null, arrays, objects at the
// name level and a mix of the two shapes are refused naming the key. An
// empty object is Flat with no entries.
func parseJSON(data []byte, c *collector) (Shape, error) {
	w, err := newJSONWalker(data)
	if err != nil {
		return Flat, err
	}
	var (
		shape   Shape
		decided bool
	)
	err = w.top(func(key string, line int, v json.Token) error {
		s := Flat
		if v == json.Delim('{') {
			s = Nested
		}
		if !decided {
			shape, decided = s, true
		} else if s != shape {
			return mixedShapes(line, []string{key}, describe(v), shape)
		}
		if shape == Flat {
			return jsonLeaf(w, c, "", key, line, v)
		}
		if p := ref.SegmentProblem(key); p != "" {
			return fmt.Errorf("line %d: %s is not a valid namespace: %s", line, keyPath(key), p)
		}
		return w.object([]string{key}, func(name string, line int, v json.Token) error {
			if v == json.Delim('{') {
				return fmt.Errorf("line %d: %s is an object (want a string: the nesting is namespace, name, value)", line, keyPath(key, name))
			}
			return jsonLeaf(w, c, key, name, line, v)
		})
	})
	if err != nil {
		return Flat, err
	}
	return shape, nil
}

// jsonLeaf adds the secret ns/name whose value starts with token v.
func jsonLeaf(w *jsonWalker, c *collector, ns, name string, line int, v json.Token) error {
	path := []string{name}
	if ns != "" {
		path = []string{ns, name}
	}
	if err := checkName(line, path); err != nil {
		return err
	}
	text, err := w.leaf(v, line, path)
	if err != nil {
		return err
	}
	where := keyPath(path...)
	return c.add(ns, name, []byte(text), where, func() string { return fmt.Sprintf("line %d: %s", line, where) })
}

// checkName refuses a key path whose last key is not a valid name.
func checkName(line int, path []string) error {
	if p := ref.SegmentProblem(path[len(path)-1]); p != "" {
		return fmt.Errorf("line %d: %s is not a valid name: %s", line, keyPath(path...), p)
	}
	return nil
}

// mixedShapes refuses a value of the other shape than the first one set.
func mixedShapes(line int, path []string, kind string, first Shape) error {
	held := "a string"
	if first == Nested {
		held = "an object"
	}
	return fmt.Errorf("line %d: %s is %s, but the first key holds %s (want every value a string, or every value an object of strings)", line, keyPath(path...), kind, held)
}
