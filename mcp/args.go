package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
)

// decodeArgs decodes a tool's arguments, a JSON object of the fields of
// the op it stands for, into a request of that op. Every field is checked
// as serve checks a request line's: a name the tool does not take, a
// name given twice, a value of the wrong kind or over its cap is
// bad_request, naming it. No argument may claim an actor, an attestation
// or an id: the session claims them.
func decodeArgs(t tool, raw []byte) (ops.Request, error) {
	var req ops.Request
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return req, nil
	}
	spec, _ := manifest.Op(t.op)
	takes := (spec.Needs | spec.Accepts | manifest.FieldEnv) &^ t.drop
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return req, badArgs("the arguments must be a JSON object")
	}
	var seen manifest.FieldSet
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return req, badArgs("the arguments are not valid JSON")
		}
		key := tok.(string)
		f, ok := manifest.RequestField(key)
		if !ok || takes&f.Bit == 0 {
			return req, badArgs(fmt.Sprintf("%s takes no argument %s", t.name, strconv.Quote(truncate(key, 64))))
		}
		if seen&f.Bit != 0 {
			return req, badArgs(fmt.Sprintf("argument %q is given twice", key))
		}
		seen |= f.Bit
		if err := decodeField(dec, &req, f); err != nil {
			return req, err
		}
	}
	if _, err := dec.Token(); err != nil {
		return req, badArgs("the arguments are not valid JSON")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return req, badArgs("the arguments hold more than one JSON value")
	}
	return req, nil
}

// decodeField decodes the value of field f into req.
func decodeField(dec *json.Decoder, req *ops.Request, f manifest.Field) error {
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		return badArgs("the arguments are not valid JSON")
	}
	switch {
	case f.Raw:
		if len(v) > f.Max {
			return badArgs(fmt.Sprintf("argument %q is larger than %d bytes", f.Name, f.Max))
		}
		if name, dup := repeatedName(v); dup {
			return badArgs(fmt.Sprintf("argument %q repeats the name %s in an object", f.Name, strconv.Quote(truncate(name, 64))))
		}
		req.SetRaw(f, v)
	case f.Bool:
		var b bool
		if json.Unmarshal(v, &b) != nil {
			return badArgs(fmt.Sprintf("argument %q must be true or false", f.Name))
		}
		req.SetBool(f, b)
	case f.Int:
		n, err := strconv.ParseUint(string(v), 10, 64)
		if err != nil || n < uint64(f.Min) || n > uint64(f.Max) {
			return badArgs(fmt.Sprintf("argument %q must be an integer from %d to %d", f.Name, f.Min, f.Max))
		}
		req.SetInt(f, n)
	default:
		var s string
		if len(v) == 0 || v[0] != '"' || json.Unmarshal(v, &s) != nil {
			return badArgs(fmt.Sprintf("argument %q must be a string", f.Name))
		}
		if len(s) > f.Max {
			return badArgs(fmt.Sprintf("argument %q is larger than %d bytes", f.Name, f.Max))
		}
		req.Set(f, s)
	}
	return nil
}

// repeatedName reports a name that some object inside v gives twice.
func repeatedName(v []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(v))
	type frame struct {
		obj  bool
		seen map[string]bool
		key  bool // the next token of an object is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.obj && top.key {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				continue
			}
			k := tok.(string)
			if top.seen[k] {
				return k, true
			}
			top.seen[k], top.key = true, false
			continue
		}
		if top != nil && top.obj {
			top.key = true
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{obj: true, seen: map[string]bool{}, key: true})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if len(stack) == 0 {
			return "", false
		}
	}
}

// badArgs is a bad_request about a tool's arguments.
func badArgs(msg string) error { return ops.Errorf(manifest.BadRequest, "%s", msg) }

// truncate cuts s to at most n bytes, on a UTF-8 boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
