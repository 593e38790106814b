package serve

import (
	"fmt"
	"math/bits"
	"unicode/utf8"

	"github.com/arca-secrets/arca/internal/jsonstr"
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
// A raw field (id) is a slice of line. Names (nil: none) gives the keys
// and the short fields their strings (see interner).
func decodeRequest(line []byte, names *interner) (req ops.Request, problem string) {
	if !utf8.Valid(line) {
		return ops.Request{}, "request is not valid UTF-8"
	}
	s := scanner{b: line, intern: names}
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
		key, ok := s.fieldName(len(line))
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
		// A raw field is copied into the response and the audit event:
		// it must be I-JSON, no name repeated in any object inside it.
		start := s.i
		s.unique = true
		ok := s.skipValue(start + f.Max)
		s.unique = false
		if !ok {
			return fmt.Sprintf("field %q is larger than %d bytes", key, f.Max), true
		}
		if s.hasDup {
			return fmt.Sprintf("field %q repeats the name %s in an object", key, quoteKey(s.dup)), false
		}
		req.SetRaw(f, s.b[start:s.i:s.i])
		return "", false
	}
	if f.Bool {
		switch s.peek() {
		case 't':
			if s.literal("true") {
				req.SetBool(f, true)
			}
		case 'f':
			if s.literal("false") {
				req.SetBool(f, false)
			}
		default:
			s.skipValue(len(s.b))
			return fmt.Sprintf("field %q must be true or false", key), false
		}
		return "", false
	}
	if f.Int {
		v, ok := s.uint()
		if !ok || v < uint64(f.Min) || v > uint64(f.Max) {
			return fmt.Sprintf("field %q must be an integer from %d to %d", key, f.Min, f.Max), false
		}
		req.SetInt(f, v)
		return "", false
	}
	if s.peek() != '"' {
		s.skipValue(len(s.b))
		return fmt.Sprintf("field %q must be a string", key), false
	}
	var v string
	var ok bool
	if f.Secret {
		v, ok = s.str(len(s.b)) // a value or a credential: never kept
	} else {
		v, ok = s.text(len(s.b), f.Bit)
	}
	switch {
	case !ok:
		return "", false // s.err is set
	case len(v) > f.Max:
		return fmt.Sprintf("field %q is larger than %d bytes", key, f.Max), false
	}
	req.Set(f, v)
	return "", false
}

// uint decodes the JSON value at s.i as an integer of at most 16 digits,
// written as digits alone (no sign, fraction or exponent). Any other
// value is skipped, and false returned.
func (s *scanner) uint() (uint64, bool) {
	start, v := s.i, uint64(0)
	for s.i < len(s.b) && s.i-start < 17 && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		v = v*10 + uint64(s.b[s.i]-'0')
		s.i++
	}
	n := s.i - start
	switch {
	case n > 0 && n <= 16 && !(n > 1 && s.b[start] == '0') && !s.numberGoesOn():
		return v, true
	}
	s.i = start
	s.skipValue(len(s.b))
	return 0, false
}

// numberGoesOn reports whether the number before s.i goes on: a fraction,
// an exponent or more digits.
func (s *scanner) numberGoesOn() bool {
	switch s.peek() {
	case '.', 'e', 'E', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return true
	}
	return false
}

// quoteKey quotes an unknown key for a message, cut to 64 bytes.
func quoteKey(k string) string {
	if len(k) > 64 {
		return fmt.Sprintf("%q…", k[:64])
	}
	return fmt.Sprintf("%q", k)
}

// scanner walks one JSON text. err is set on a syntax error, deep on
// nesting past manifest.MaxDepth. With unique set, skipValue collects the
// names of the objects open in names, and sets dup (and hasDup) to the
// first name it finds repeated in one object.
type scanner struct {
	b      []byte
	intern *interner // nil: every string is a copy
	i      int
	err    bool
	deep   bool
	unique bool
	names  []string
	dup    string
	hasDup bool
}

// fieldName is str for a request's key: a plain literal that names a request field is
// that field's name from manifest's table, not a copy.
func (s *scanner) fieldName(limit int) (string, bool) {
	if s.intern != nil {
		if body, n := jsonstr.Plain(s.b[s.i:]); n > 0 && s.i+n <= limit {
			if f, known := manifest.RequestField(string(body)); known {
				s.i += n
				return f.Name, true
			}
		}
	}
	return s.str(limit)
}

// text is str for the short field f: a plain literal (jsonstr.Plain)
// that is the text the last request sent in f is that string again.
func (s *scanner) text(limit int, f manifest.FieldSet) (string, bool) {
	if s.intern != nil {
		if body, n := jsonstr.Plain(s.b[s.i:]); n > 0 && s.i+n <= limit {
			s.i += n
			return s.intern.of(f, body), true
		}
	}
	return s.str(limit)
}

// interner keeps, for each short field (op, ref, env, actor), the last
// text a session's requests sent in it, which the next request often
// repeats: a request that repeats them all allocates none. It never holds
// a value or an attestation, nor a text over internLen bytes.
type interner struct{ last [bits.UintSize]string }

const internLen = 256

// of returns body, the text of field f, as a string: the one it holds if
// it is the same text.
func (t *interner) of(f manifest.FieldSet, body []byte) string {
	i := bits.TrailingZeros(uint(f))
	if t.last[i] == string(body) {
		return t.last[i]
	}
	v := string(body)
	if len(v) <= internLen {
		t.last[i] = v
	}
	return v
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
