package secretfile

import (
	"encoding/json"
	"errors"
	"fmt"
)

// parseVaultKV reads what `vault kv get -format=json PATH` prints:
//
//	{"request_id": …, "lease_id": …, "data": {"data": {NAME: VALUE, …}, "metadata": {…}}, "warnings": …}
//
// for KV version 2, and the same with "data" itself the map of NAME: VALUE
// for version 1. It is version 2 when "data" has the key "data", an
// object, and no other but "metadata": as version 1 that inner object
// could be no secret's value. Values are as in json;
// every other key at the top and everything under "metadata" is ignored.
// The result is Flat.
func parseVaultKV(data []byte, c *collector) error {
	w, err := newJSONWalker(data)
	if err != nil {
		return err
	}
	var (
		found  bool
		v1, v2 collector // the members of "data" read as KV v1; of "data"."data" as v2
		// What makes "data" the v2 pair: an inner "data" object, and no
		// other key but "metadata".
		inner, other bool
		// The first refusal of a member that is not a v1 secret, which is
		// held back while "data" may yet be the v2 pair.
		v1Err error
	)
	holdV1 := func(err error) {
		if v1Err == nil {
			v1Err = err
		}
	}
	err = w.top(func(key string, _ int, v json.Token) error {
		if key != "data" {
			return w.skip(v)
		}
		found = true
		if v != json.Delim('{') {
			return fmt.Errorf("line %d: %s is %s (want an object)", w.line(), keyPath("data"), describe(v))
		}
		return w.object([]string{"data"}, func(name string, line int, v json.Token) error {
			path := []string{"data", name}
			switch {
			case name == "data" && v == json.Delim('{'):
				inner = true
				holdV1(fmt.Errorf("line %d: %s is an object (want a string)", line, keyPath(path...)))
				return w.object(path, func(n string, line int, v json.Token) error {
					return vaultLeaf(w, &v2, line, []string{"data", "data", n}, v)
				})
			case name == "metadata":
				if v == json.Delim('{') || v == json.Delim('[') {
					holdV1(fmt.Errorf("line %d: %s is %s (want a string)", line, keyPath(path...), describe(v)))
					return w.skip(v)
				}
				holdV1(vaultLeaf(w, &v1, line, path, v))
				return nil
			}
			other = true
			if v1Err != nil {
				return v1Err
			}
			return vaultLeaf(w, &v1, line, path, v)
		})
	})
	if err != nil {
		return err
	}
	switch {
	case !found:
		return errors.New(`no "data" key: not the output of vault kv get -format=json`)
	case inner && !other: // "metadata" may be left out (a trimmed export)
		return c.putAll(v2.es)
	case v1Err != nil:
		return v1Err
	}
	return c.putAll(v1.es)
}

// vaultLeaf adds the secret at path, whose value starts with token v.
func vaultLeaf(w *jsonWalker, c *collector, line int, path []string, v json.Token) error {
	if err := checkName(line, path); err != nil {
		return err
	}
	text, err := w.leaf(v, line, path)
	if err != nil {
		return err
	}
	name := path[len(path)-1]
	where := keyPath(name)
	return c.add("", name, []byte(text), where, func() string { return fmt.Sprintf("line %d: %s", line, keyPath(path...)) })
}
