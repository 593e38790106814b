package pdp

import (
	"bytes"
	"encoding/json"
	"io"
)

// parseVerdict reads the child's stdout as exactly one JSON object with a
// boolean allow, an optional string reason and an optional array of string
// obligations. It reports why the verdict is unusable, or "".
func parseVerdict(b []byte) (Verdict, string) {
	if v, _, ok := fastVerdict(b); ok {
		return v, ""
	}
	obj, why := oneObject(b)
	if why != "" {
		return Verdict{}, why
	}
	f, why := knownFields(obj)
	if why != "" {
		return Verdict{}, why
	}
	return f.verdict()
}

// parseEcho reads a persistent decider's line: a verdict as parseVerdict
// reads it, which may also carry nonce, a string, given once. It returns
// the verdict and the nonce it echoes (empty when it has none, and which
// may share b's bytes), or why the line is unusable. Whether the nonce is
// the request's is the caller's to judge.
func parseEcho(b []byte) (Verdict, []byte, string) {
	if v, nonce, ok := fastVerdict(b); ok {
		return v, nonce, ""
	}
	return decodeEcho(b)
}

// decodeEcho is parseEcho with encoding/json alone.
func decodeEcho(b []byte) (Verdict, []byte, string) {
	obj, why := oneObject(b)
	if why != "" {
		return Verdict{}, nil, why
	}
	m, why := objectMembers(obj, "verdict", []string{"allow", "reason", "obligations", "nonce"})
	if why != "" {
		return Verdict{}, nil, why
	}
	v, why := fields{allow: m[0], reason: m[1], obligations: m[2]}.verdict()
	if why != "" || m[3] == nil {
		return v, nil, why
	}
	nonce, ok := jsonString(m[3])
	if !ok {
		return Verdict{}, nil, "verdict nonce is not a string"
	}
	return v, []byte(nonce), ""
}

// oneObject returns the single JSON object in b; whitespace around it is
// allowed, anything else is not.
func oneObject(b []byte) (json.RawMessage, string) {
	dec := json.NewDecoder(bytes.NewReader(b))
	var obj json.RawMessage
	if err := dec.Decode(&obj); err == io.EOF {
		return nil, "verdict is empty"
	} else if err != nil {
		return nil, "verdict is not JSON"
	}
	if obj[0] != '{' {
		return nil, "verdict is not a JSON object"
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, "verdict has data after the JSON object"
	}
	return obj, ""
}

// fields holds the raw values of the keys a verdict may carry; nil when
// absent.
type fields struct {
	allow, reason, obligations json.RawMessage
}

// knownFields walks a valid JSON object and keeps the values of allow,
// reason and obligations. Keys match exactly; a known key given twice is
// refused rather than letting the last one win.
func knownFields(obj json.RawMessage) (fields, string) {
	m, why := objectMembers(obj, "verdict", []string{"allow", "reason", "obligations"})
	if why != "" {
		return fields{}, why
	}
	return fields{allow: m[0], reason: m[1], obligations: m[2]}, ""
}

func (f fields) verdict() (Verdict, string) {
	var v Verdict
	switch string(f.allow) {
	case "true":
		v.Allow = true
	case "false":
	default:
		return Verdict{}, "verdict has no boolean allow"
	}
	if f.reason != nil {
		s, ok := jsonString(f.reason)
		if !ok {
			return Verdict{}, "verdict reason is not a string"
		}
		v.Reason = s
	}
	if f.obligations != nil {
		obs, ok := jsonStrings(f.obligations)
		if !ok {
			return Verdict{}, "verdict obligations is not an array of strings"
		}
		v.Obligations = obs
	}
	return v, ""
}

// jsonString decodes raw only if it is a JSON string: encoding/json would
// quietly turn null into "".
func jsonString(raw json.RawMessage) (string, bool) {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// jsonStrings decodes raw only if it is an array whose every element is a
// JSON string. An empty array gives nil.
func jsonStrings(raw json.RawMessage) ([]string, bool) {
	return jsonArray(raw, jsonString)
}

// jsonArray decodes raw only if it is an array whose every element elem
// turns into a string. An empty array gives nil.
func jsonArray(raw json.RawMessage, elem func(json.RawMessage) (string, bool)) ([]string, bool) {
	var elems []json.RawMessage
	if len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &elems) != nil {
		return nil, false
	}
	var out []string
	for _, e := range elems {
		s, ok := elem(e)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}
