package pdp

// fastVerdict parses the verdicts deciders print most — an object with
// allow and, optionally, reason, obligations and a persistent decider's
// nonce, whose strings are plain printable ASCII — without encoding/json,
// which costs more than a persistent decider's round trip. nonce, empty
// when the object has none, is the bytes of b between its quotes. ok is false for anything else (another key, an
// escape, a byte outside printable ASCII, a key given twice, no allow, bad
// JSON), and parseVerdict or parseEcho then decides with encoding/json, so
// every refusal and its message stay the decoder's. Where ok is true the
// verdict and the nonce are the ones the decoder gives (FuzzFastVerdict
// checks).
func fastVerdict(b []byte) (v Verdict, nonce []byte, ok bool) {
	s := scanner{b: b}
	s.space()
	if !s.byte('{') {
		return Verdict{}, nil, false
	}
	var seen [4]bool
	for first := true; ; first = false {
		s.space()
		if s.byte('}') {
			if first || !seen[0] {
				return Verdict{}, nil, false
			}
			break
		}
		if !first && !(s.byte(',') && s.spaced()) {
			return Verdict{}, nil, false
		}
		key, ok := s.str()
		if !ok {
			return Verdict{}, nil, false
		}
		s.space()
		if !s.byte(':') {
			return Verdict{}, nil, false
		}
		s.space()
		if !s.member(key, &v, &nonce, &seen) {
			return Verdict{}, nil, false
		}
	}
	s.space()
	if s.i != len(s.b) {
		return Verdict{}, nil, false
	}
	return v, nonce, true
}

// member reads the value of key into v (or nonce), refusing a key other
// than the four or one seen before.
func (s *scanner) member(key string, v *Verdict, nonce *[]byte, seen *[4]bool) bool {
	var i int
	switch key {
	case "allow":
		i = 0
	case "reason":
		i = 1
	case "obligations":
		i = 2
	case "nonce":
		i = 3
	default:
		return false
	}
	if seen[i] {
		return false
	}
	seen[i] = true
	switch i {
	case 0:
		if s.word("true") {
			v.Allow = true
			return true
		}
		return s.word("false")
	case 1:
		r, ok := s.str()
		v.Reason = r
		return ok
	case 3:
		n, ok := s.raw()
		*nonce = n
		return ok
	}
	return s.strings(&v.Obligations)
}

// scanner walks b; every method reports whether it found what it looks for.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) space() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

// spaced skips whitespace and always succeeds.
func (s *scanner) spaced() bool { s.space(); return true }

func (s *scanner) byte(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *scanner) word(w string) bool {
	if len(s.b)-s.i >= len(w) && string(s.b[s.i:s.i+len(w)]) == w {
		s.i += len(w)
		return true
	}
	return false
}

// str reads a string of printable ASCII without escapes.
func (s *scanner) str() (string, bool) {
	r, ok := s.raw()
	return string(r), ok
}

// raw is str without the copy: the string's bytes in b.
func (s *scanner) raw() ([]byte, bool) {
	if !s.byte('"') {
		return nil, false
	}
	start := s.i
	for ; s.i < len(s.b); s.i++ {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return s.b[start : s.i-1], true
		case c == '\\' || c < 0x20 || c > 0x7e:
			return nil, false
		}
	}
	return nil, false
}

// strings reads an array of such strings; [] gives nil.
func (s *scanner) strings(out *[]string) bool {
	if !s.byte('[') {
		return false
	}
	s.space()
	if s.byte(']') {
		return true
	}
	for {
		str, ok := s.str()
		if !ok {
			return false
		}
		*out = append(*out, str)
		s.space()
		if s.byte(']') {
			return true
		}
		if !s.byte(',') {
			return false
		}
		s.space()
	}
}
