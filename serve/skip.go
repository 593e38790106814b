package serve

import (
	"slices"

	"github.com/arca-secrets/arca/manifest"
)

// skipValue steps over one JSON value inside the request object, which
// must end by limit. It returns false on a syntax error (s.err set), when
// the value runs past limit (s.err not set), or when it nests deeper than
// manifest.MaxDepth levels, the request object counted as the first
// (s.deep set): every line serve writes holds what it accepted, and a
// reader with a recursion limit of its own (jq, Python's json, serde_json
// at 128) must be able to read it. The stack is explicit and bounded by the
// same limit, so hostile nesting costs no stack frame and no allocation.
//
// With s.unique set (a value serve copies into what it writes), it also
// looks for an object that repeats a name, the names compared after
// unescaping, and sets s.dup to the first such name: I-JSON (RFC 7493),
// which every line serve writes is, has unique names, and a strict reader
// (Go's encoding/json/v2) refuses a line that repeats one.
func (s *scanner) skipValue(limit int) bool {
	var buf [manifest.MaxDepth]byte
	stack := buf[:0]
	var firstName [manifest.MaxDepth]int // with s.unique: where an open object's names start in s.names
	for {
		opened, ok := s.scalarOrOpen(len(stack), limit)
		if !ok {
			return false
		}
		if opened != 0 {
			if opened == '{' && s.unique {
				firstName[len(stack)] = len(s.names) - 1 // its first name is read
			}
			stack = append(stack, opened)
			continue // a container was opened: its first value comes next
		}
		// After a value: close containers, or find the next element.
		for {
			if s.i > limit {
				return false
			}
			if len(stack) == 0 {
				return true
			}
			s.ws()
			top := stack[len(stack)-1]
			if s.eat(',') {
				if top == '{' && !s.key(limit) {
					return false
				}
				break
			}
			if (top == '{' && s.eat('}')) || (top == '[' && s.eat(']')) {
				stack = stack[:len(stack)-1]
				if top == '{' && s.unique {
					s.checkNames(firstName[len(stack)])
				}
				continue
			}
			s.err = true
			return false
		}
	}
}

// scalarOrOpen consumes a scalar or an empty container (opened 0), or the
// opening of a container with an object's first key (opened '{' or '[': a
// value comes next). open is how many containers are open around it.
func (s *scanner) scalarOrOpen(open, limit int) (opened byte, ok bool) {
	if s.i > limit {
		return 0, false
	}
	s.ws()
	switch c := s.peek(); {
	case (c == '{' || c == '[') && open+2 > manifest.MaxDepth:
		s.deep = true // the request object and the open containers, plus this one
		return 0, false
	case c == '{':
		s.i++
		s.ws()
		if s.eat('}') {
			return 0, true
		}
		return '{', s.key(limit)
	case c == '[':
		s.i++
		s.ws()
		if s.eat(']') {
			return 0, true
		}
		return '[', true
	case c == '"':
		_, ok := s.str(limit)
		return 0, ok || s.limitHit(limit)
	case c == 't':
		return 0, s.literal("true")
	case c == 'f':
		return 0, s.literal("false")
	case c == 'n':
		return 0, s.literal("null")
	case c == '-' || ('0' <= c && c <= '9'):
		return 0, s.number()
	}
	s.err = true
	return 0, false
}

// key consumes `"name" :` inside an object; with s.unique set, it adds the
// name to s.names.
func (s *scanner) key(limit int) bool {
	s.ws()
	name, ok := s.str(limit)
	if !ok {
		return s.limitHit(limit)
	}
	if s.unique {
		s.names = append(s.names, name)
	}
	s.ws()
	if !s.eat(':') {
		s.err = true
		return false
	}
	return true
}

// limitHit turns a string cut short by limit into "too long", not a syntax
// error, and reports false either way.
func (s *scanner) limitHit(limit int) bool {
	if s.i >= limit && s.i < len(s.b) {
		s.err = false
	}
	return false
}

func (s *scanner) literal(lit string) bool {
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		s.err = true
		return false
	}
	s.i += len(lit)
	return true
}

// number consumes a JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number() bool {
	s.eat('-')
	switch {
	case s.eat('0'):
	case s.digits() == 0:
		s.err = true
		return false
	}
	if s.eat('.') && s.digits() == 0 {
		s.err = true
		return false
	}
	if s.eat('e') || s.eat('E') {
		if !s.eat('+') {
			s.eat('-')
		}
		if s.digits() == 0 {
			s.err = true
			return false
		}
	}
	return true
}

func (s *scanner) digits() int {
	n := 0
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}

// checkNames looks for a repeated name among the names of the object that
// just closed, s.names[from:], sets s.dup to the first found (in sorted
// order) unless one was already found, and drops them.
func (s *scanner) checkNames(from int) {
	names := s.names[from:]
	if !s.hasDup && len(names) > 1 {
		slices.Sort(names)
		for i := 1; i < len(names); i++ {
			if names[i] == names[i-1] {
				s.dup, s.hasDup = names[i], true
				break
			}
		}
	}
	clear(names)
	s.names = s.names[:from]
}
