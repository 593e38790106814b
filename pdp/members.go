package pdp

import (
	"bytes"
	"encoding/json"
	"io"
)

// members reads b as exactly one JSON object (whitespace around it is
// fine) and returns the raw values of keys, in order, nil where absent.
// Keys match exactly; one of keys given twice is refused; other keys are
// ignored. what names b in messages ("opa response").
func members(b []byte, what string, keys ...string) ([]json.RawMessage, string) {
	dec := json.NewDecoder(bytes.NewReader(b))
	var obj json.RawMessage
	if err := dec.Decode(&obj); err == io.EOF {
		return nil, what + " is empty"
	} else if err != nil {
		return nil, what + " is not JSON"
	}
	if obj[0] != '{' {
		return nil, what + " is not a JSON object"
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, what + " has data after the JSON object"
	}
	return objectMembers(obj, what, keys)
}

// objectMembers walks obj, a valid JSON object, as members does.
func objectMembers(obj json.RawMessage, what string, keys []string) ([]json.RawMessage, string) {
	out := make([]json.RawMessage, len(keys))
	dec := json.NewDecoder(bytes.NewReader(obj))
	dec.Token() // the opening brace; obj is already known to be valid
	for dec.More() {
		tok, err := dec.Token()
		key, _ := tok.(string)
		var raw json.RawMessage
		if err != nil || dec.Decode(&raw) != nil {
			return nil, what + " is not JSON"
		}
		for i, k := range keys {
			if k != key {
				continue
			}
			if out[i] != nil {
				return nil, what + " repeats key " + key
			}
			out[i] = raw
		}
	}
	return out, ""
}
