package serve

// skipValue steps over one JSON value, which must end by limit. It returns
// false on a syntax error (s.err set) or when the value runs past limit
// (s.err not set). It keeps an explicit stack, so hostile nesting costs a
// byte per level, never a stack frame.
func (s *scanner) skipValue(limit int) bool {
	var stack []byte
	for {
		complete, ok := s.scalarOrOpen(&stack, limit)
		if !ok {
			return false
		}
		if !complete {
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
				continue
			}
			s.err = true
			return false
		}
	}
}

// scalarOrOpen consumes a scalar or an empty container (complete), or the
// opening of a container, pushed on stack with an object's first key (not
// complete: a value comes next).
func (s *scanner) scalarOrOpen(stack *[]byte, limit int) (complete, ok bool) {
	if s.i > limit {
		return false, false
	}
	s.ws()
	switch c := s.peek(); {
	case c == '{':
		s.i++
		s.ws()
		if s.eat('}') {
			return true, true
		}
		*stack = append(*stack, '{')
		return false, s.key(limit)
	case c == '[':
		s.i++
		s.ws()
		if s.eat(']') {
			return true, true
		}
		*stack = append(*stack, '[')
		return false, true
	case c == '"':
		_, ok := s.str(limit)
		return true, ok || s.limitHit(limit)
	case c == 't':
		return true, s.literal("true")
	case c == 'f':
		return true, s.literal("false")
	case c == 'n':
		return true, s.literal("null")
	case c == '-' || ('0' <= c && c <= '9'):
		return true, s.number()
	}
	s.err = true
	return false, false
}

// key consumes `"name" :` inside an object.
func (s *scanner) key(limit int) bool {
	s.ws()
	if _, ok := s.str(limit); !ok {
		return s.limitHit(limit)
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
