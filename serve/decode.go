package serve

import (
	"fmt"
	"unicode/utf8"

	"github.com/arca-secrets/arca/internal/jsonstr"
	"github.com/arca-secrets/arca/manifest"
)

// request is one decoded request line. Field presence is tracked apart from
// the value, so `"ref":""` and no ref differ.
type request struct {
	id          []byte // raw JSON as sent; nil when absent
	op          string
	ref         string
	env         string
	value       []byte
	actor       string
	attestation string
	has         fields
}

type fields uint8

const (
	fID fields = 1 << iota
	fOp
	fRef
	fEnv
	fValue
	fActor
	fAttestation
)

// field describes one request field: its bit, its cap in bytes, and where
// a string value goes. id is special: any JSON value, kept raw.
type field struct {
	bit fields
	max int
	set func(r *request, s string)
}

func lookupField(key string) (field, bool) {
	switch key {
	case "id":
		return field{bit: fID, max: manifest.MaxID}, true
	case "op":
		return field{fOp, manifest.MaxOp, func(r *request, s string) { r.op = s }}, true
	case "ref":
		return field{fRef, manifest.MaxRef, func(r *request, s string) { r.ref = s }}, true
	case "env":
		return field{fEnv, manifest.MaxSegment, func(r *request, s string) { r.env = s }}, true
	case "value":
		return field{fValue, manifest.MaxValue, func(r *request, s string) { r.value = []byte(s) }}, true
	case "actor":
		return field{fActor, manifest.MaxActor, func(r *request, s string) { r.actor = s }}, true
	case "attestation":
		return field{fAttestation, manifest.MaxAttestation, func(r *request, s string) { r.attestation = s }}, true
	}
	return field{}, false
}

// decodeRequest decodes one line strictly: one JSON object, nothing after
// it, valid UTF-8, exact keys, no duplicates, no unknown fields, no nesting
// deeper than manifest.MaxDepth, every field of its type and within its cap. On a problem it returns a message naming
// the field and the cap; req.id is still set when the line was well-formed
// JSON with a valid id, so the error can echo it.
func decodeRequest(line []byte) (req request, problem string) {
	if !utf8.Valid(line) {
		return request{}, "request is not valid UTF-8"
	}
	s := scanner{b: line}
	s.ws()
	if !s.eat('{') {
		return request{}, "request must be one JSON object"
	}
	s.ws()
	if s.eat('}') {
		return finish(&s, req, "")
	}
	for {
		key, ok := s.str(len(line))
		if !ok {
			return request{}, s.syntax()
		}
		s.ws()
		if !s.eat(':') {
			return request{}, s.syntax()
		}
		s.ws()
		p, fatal := decodeField(&s, &req, key)
		switch {
		case s.deep:
			return request{}, fmt.Sprintf("request nests deeper than %d levels", manifest.MaxDepth)
		case s.err:
			return request{}, s.syntax()
		case fatal:
			return request{}, p
		case problem == "":
			problem = p
		}
		s.ws()
		if s.eat('}') {
			return finish(&s, req, problem)
		}
		if !s.eat(',') {
			return request{}, s.syntax()
		}
		s.ws()
	}
}

func finish(s *scanner, req request, problem string) (request, string) {
	s.ws()
	if s.i != len(s.b) {
		return request{}, "request has data after the JSON object"
	}
	if problem == "" && req.has&fOp == 0 {
		problem = `field "op" is required`
	}
	return req, problem
}

// decodeField decodes the value of key into req. A problem is returned as
// a message; fatal means decoding cannot go on past it. Syntax errors set
// s.err.
func decodeField(s *scanner, req *request, key string) (problem string, fatal bool) {
	f, known := lookupField(key)
	if !known {
		s.skipValue(len(s.b))
		return fmt.Sprintf("unknown field %s", quoteKey(key)), false
	}
	if req.has&f.bit != 0 {
		s.skipValue(len(s.b))
		if f.bit == fID {
			req.id = nil // which one to echo would be a guess
		}
		return fmt.Sprintf("duplicate field %q", key), false
	}
	req.has |= f.bit
	if f.bit == fID {
		start := s.i
		if !s.skipValue(start + f.max) {
			return fmt.Sprintf(`field "id" is larger than %d bytes`, f.max), true
		}
		req.id = s.b[start:s.i:s.i]
		return "", false
	}
	if s.peek() != '"' {
		s.skipValue(len(s.b))
		return fmt.Sprintf("field %q must be a string", key), false
	}
	v, ok := s.str(len(s.b))
	switch {
	case !ok:
		return "", false // s.err is set
	case len(v) > f.max:
		return fmt.Sprintf("field %q is larger than %d bytes", key, f.max), false
	}
	f.set(req, v)
	return "", false
}

// quoteKey quotes an unknown key for a message, cut to 64 bytes.
func quoteKey(k string) string {
	if len(k) > 64 {
		return fmt.Sprintf("%q…", k[:64])
	}
	return fmt.Sprintf("%q", k)
}

// scanner walks one JSON text. err is set on a syntax error, deep on
// nesting past manifest.MaxDepth.
type scanner struct {
	b    []byte
	i    int
	err  bool
	deep bool
}

func (s *scanner) syntax() string {
	return fmt.Sprintf("request is not valid JSON (at byte %d)", s.i)
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *scanner) eat(c byte) bool {
	if s.peek() == c {
		s.i++
		return true
	}
	return false
}

// str decodes the JSON string at s.i, which must end by limit: strictly
// (jsonstr.Decode), so invalid UTF-8, control characters and lone
// surrogates are syntax errors. A string that runs past limit stops s at
// limit.
func (s *scanner) str(limit int) (string, bool) {
	v, n, ok := jsonstr.Decode(s.b[s.i:])
	switch end := s.i + n; {
	case ok && end <= limit:
		s.i = end
		return v, true
	case n == 0: // no string here
	case end >= limit:
		s.i = max(limit, s.i+1)
	default:
		s.i = end
	}
	s.err = true
	return "", false
}
