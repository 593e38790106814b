package serve

import (
	"fmt"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
)

// decodeRequest decodes one line strictly into the request ops takes: one
// JSON object, nothing after it, valid UTF-8, exact keys, no duplicates, no
// field manifest's field table does not name, no nesting deeper than
// manifest.MaxDepth, every field of its kind and within its cap. Which
// fields an op needs or refuses is for ops to say, once. On a problem it
// returns a message naming the field and the cap; req.ID is still set when
// the line was well-formed JSON with a valid id, so the error can echo it.
// A raw field (id) is a slice of line.
func decodeRequest(line []byte) (req ops.Request, problem string) {
	if !utf8.Valid(line) {
		return ops.Request{}, "request is not valid UTF-8"
	}
	s := scanner{b: line}
	s.ws()
	if !s.eat('{') {
		return ops.Request{}, "request must be one JSON object"
	}
	s.ws()
	var has manifest.FieldSet
	if s.eat('}') {
		return finish(&s, req, has, "")
	}
	for {
		key, ok := s.str(len(line))
		if !ok {
			return ops.Request{}, s.syntax()
		}
		s.ws()
		if !s.eat(':') {
			return ops.Request{}, s.syntax()
		}
		s.ws()
		p, fatal := decodeField(&s, &req, &has, key)
		switch {
		case s.deep:
			return ops.Request{}, fmt.Sprintf("request nests deeper than %d levels", manifest.MaxDepth)
		case s.err:
			return ops.Request{}, s.syntax()
		case fatal:
			return ops.Request{}, p
		case problem == "":
			problem = p
		}
		s.ws()
		if s.eat('}') {
			return finish(&s, req, has, problem)
		}
		if !s.eat(',') {
			return ops.Request{}, s.syntax()
		}
		s.ws()
	}
}

func finish(s *scanner, req ops.Request, has manifest.FieldSet, problem string) (ops.Request, string) {
	s.ws()
	if s.i != len(s.b) {
		return ops.Request{}, "request has data after the JSON object"
	}
	if problem == "" && has&manifest.FieldOp == 0 {
		problem = `field "op" is required`
	}
	return req, problem
}

// decodeField decodes the value of key into req; has is the fields seen so
// far. A problem is returned as a message; fatal means decoding cannot go
// on past it. Syntax errors set s.err.
func decodeField(s *scanner, req *ops.Request, has *manifest.FieldSet, key string) (problem string, fatal bool) {
	f, known := manifest.RequestField(key)
	if !known {
		s.skipValue(len(s.b))
		return fmt.Sprintf("unknown field %s", quoteKey(key)), false
	}
	if *has&f.Bit != 0 {
		s.skipValue(len(s.b))
		if f.Raw {
			req.SetRaw(f, nil) // which one to echo would be a guess
		}
		return fmt.Sprintf("duplicate field %q", key), false
	}
	*has |= f.Bit
	if f.Raw {
		start := s.i
		if !s.skipValue(start + f.Max) {
			return fmt.Sprintf("field %q is larger than %d bytes", key, f.Max), true
		}
		req.SetRaw(f, s.b[start:s.i:s.i])
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
	case len(v) > f.Max:
		return fmt.Sprintf("field %q is larger than %d bytes", key, f.Max), false
	}
	req.Set(f, v)
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

// str decodes the JSON string at s.i, which must end before limit. Invalid
// UTF-8, control characters and lone surrogates are syntax errors.
func (s *scanner) str(limit int) (string, bool) {
	if !s.eat('"') {
		s.err = true
		return "", false
	}
	start := s.i
	for s.i < len(s.b) && s.i < limit {
		c := s.b[s.i]
		if c == '"' {
			s.i++
			return string(s.b[start : s.i-1]), true
		}
		if c == '\\' || c < 0x20 || c >= 0x80 {
			return s.strSlow(start, limit)
		}
		s.i++
	}
	s.err = true
	return "", false
}

func (s *scanner) strSlow(start, limit int) (string, bool) {
	out := append([]byte(nil), s.b[start:s.i]...)
	for s.i < len(s.b) && s.i < limit {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return string(out), true
		case c < 0x20:
			s.err = true
			return "", false
		case c == '\\':
			var ok bool
			if out, ok = s.escape(out); !ok {
				s.err = true
				return "", false
			}
		case c < 0x80:
			out = append(out, c)
			s.i++
		default:
			r, n := utf8.DecodeRune(s.b[s.i:])
			if r == utf8.RuneError && n <= 1 {
				s.err = true
				return "", false
			}
			out = append(out, s.b[s.i:s.i+n]...)
			s.i += n
		}
	}
	s.err = true
	return "", false
}

// escape decodes the escape at s.i (a backslash) onto out.
func (s *scanner) escape(out []byte) ([]byte, bool) {
	if s.i+1 >= len(s.b) {
		return out, false
	}
	c := s.b[s.i+1]
	s.i += 2
	switch c {
	case '"', '\\', '/':
		return append(out, c), true
	case 'b':
		return append(out, '\b'), true
	case 'f':
		return append(out, '\f'), true
	case 'n':
		return append(out, '\n'), true
	case 'r':
		return append(out, '\r'), true
	case 't':
		return append(out, '\t'), true
	case 'u':
		r, ok := s.hex4()
		if !ok {
			return out, false
		}
		if utf16.IsSurrogate(r) {
			if s.i+1 >= len(s.b) || s.b[s.i] != '\\' || s.b[s.i+1] != 'u' {
				return out, false // a lone surrogate has no UTF-8 form
			}
			s.i += 2
			r2, ok := s.hex4()
			if r = utf16.DecodeRune(r, r2); !ok || r == utf8.RuneError {
				return out, false
			}
		}
		return utf8.AppendRune(out, r), true
	}
	return out, false
}

func (s *scanner) hex4() (rune, bool) {
	if s.i+4 > len(s.b) {
		return 0, false
	}
	var r rune
	for _, c := range s.b[s.i : s.i+4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	s.i += 4
	return r, true
}
