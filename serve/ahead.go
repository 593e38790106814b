package serve

// Reading ahead. While a run of reads waits on a use (an http or an exec
// op, which may take seconds), the session reads the next line in a
// goroutine of its own, so that a request sent meanwhile is started at
// once rather than after the use in hand (up to manifest.MaxUses uses in
// flight; see reads.go). At most one line is read ahead at a time, and
// whoever takes the next line (the loop, a run of reads, a group of
// writes) takes it first: only the goroutine reading ahead touches the
// input while it reads, and nothing reads the input but through
// lineReady, nextLine and next.

// aheadLine is a line read ahead, and the error of its read.
type aheadLine struct {
	line []byte
	err  error
}

// readAhead starts reading the next line in a goroutine, unless a line
// is being read ahead or is already here.
func (s *session) readAhead() {
	if s.fetch != nil || s.ahead != nil {
		return
	}
	ch := make(chan aheadLine, 1) // the goroutine never waits to hand it over
	s.fetch = ch
	go func() {
		line, err := s.in.next()
		ch <- aheadLine{line, err}
	}()
}

// lineReady reports whether a whole line is here, so that nextLine will
// not block: one read ahead, or one buffered.
func (s *session) lineReady() bool {
	if s.ahead != nil {
		return true
	}
	if s.fetch == nil {
		return s.in.lineReady()
	}
	select {
	case a := <-s.fetch:
		s.fetch, s.ahead = nil, &a
		return true
	default:
		return false
	}
}

// nextLine returns the line lineReady said is here. The slice is valid
// until the next line is read.
func (s *session) nextLine() ([]byte, error) {
	if a := s.ahead; a != nil {
		s.ahead = nil
		return a.line, a.err
	}
	return s.in.next()
}

// waitAhead waits, without holding mu, for the line being read ahead.
func (s *session) waitAhead() ([]byte, error) {
	ch := s.fetch
	s.mu.Unlock()
	a := <-ch
	s.mu.Lock()
	s.fetch = nil
	return a.line, a.err
}
