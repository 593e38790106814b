package action

import "os"

// readChunk is how much one read of a stream takes at most.
const readChunk = 32 << 10

// stream is arca's read end of one of the child's output pipes and what
// has been read of it. One goroutine (read) fills it and closes done; the
// other fields are read only after done.
type stream struct {
	r     *os.File
	limit int    // bytes kept at most
	buf   []byte // what is kept; its capacity never passes limit
	total int64  // bytes read, kept or not
	done  chan struct{}
}

func newStream(r *os.File, limit int) *stream {
	return &stream{r: r, limit: limit, done: make(chan struct{})}
}

// read reads the pipe to its end (or until it is closed under it), keeping
// the first limit bytes and counting the rest.
func (s *stream) read() {
	defer close(s.done)
	defer s.r.Close()
	chunk := make([]byte, readChunk)
	for {
		n, err := s.r.Read(chunk)
		s.keep(chunk[:n])
		if err != nil {
			return
		}
	}
}

// keep counts b and appends what fits under the limit, growing buf by
// doubling but never past the limit.
func (s *stream) keep(b []byte) {
	s.total += int64(len(b))
	if room := s.limit - len(s.buf); len(b) > room {
		b = b[:room]
	}
	if need := len(s.buf) + len(b); need > cap(s.buf) {
		grown := make([]byte, len(s.buf), min(max(2*cap(s.buf), need, 512), s.limit))
		copy(grown, s.buf)
		s.buf = grown
	}
	s.buf = append(s.buf, b...)
}

// truncated reports whether the child wrote past the limit.
func (s *stream) truncated() bool { return s.total > int64(s.limit) }
