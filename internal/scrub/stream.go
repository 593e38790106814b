package scrub

import (
	"bytes"
	"errors"
	"io"
	"slices"
)

// A Stream passes the text written to it on to a writer with every
// occurrence of a form of a Set's values replaced by a placeholder. Any
// split of a text into writes gives the same output as the whole text in
// one write.
//
// Hold-back: after a Write, the bytes not yet passed on are those from the
// first place where more text could still make an occurrence: where what
// follows is a proper prefix of a form, or is a form under Anywhere bytes
// whose right neighbour is still to come. Every byte before it is passed
// on at once, so a prompt or a "ready" line that no form could start in is
// not kept waiting. (The test is a filter on the forms' first bytes that
// may say "maybe" and hold back a little more, never less.) An occurrence
// that starts a longest form or more before the end is seen whole, so at
// most the Set's longest form less one byte is held back. The Set's
// values can be 64 KiB and a form six times that (every byte a control
// character, escaped \u00XX): at most 384 KiB. Of a union of occurrences
// that could still grow (the last one ends where the held-back bytes
// start, or among them, so an occurrence that starts there would overlap
// or touch it) only the labels are kept, at most one per label: its bytes
// are dropped, and its placeholder is written when it ends or at Close.
// Close passes on what was held back.
//
// A Stream is not safe for concurrent use.
type Stream struct {
	set    *Set
	w      io.Writer
	buf    []byte // the text not yet passed on nor dropped
	before int    // the byte before buf, or -1 at the start of the text
	err    error  // sticky: w's first error, or errClosed

	// The union of occurrences not yet ended: buf[:end] lies in it.
	open  bool
	end   int
	names []int // labels, each once, in the order they joined

	matches []match
	out     []byte
	counts  []int // placeholders naming each label, by index
	labels  []string
}

var errClosed = errors.New("scrub: write after close")

// NewStream returns a Stream that writes to w. Close does not close w.
func (s *Set) NewStream(w io.Writer) *Stream {
	return &Stream{set: s, w: w, before: -1}
}

// Write scrubs p and passes on what is decided. It reports len(p) unless
// the writer failed, whose error it returns, then and on every later call.
func (st *Stream) Write(p []byte) (int, error) {
	if st.err != nil {
		return 0, st.err
	}
	if err := st.scrub(p, false); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close passes on what was held back: at the end of the text, a part of a
// form is only text.
func (st *Stream) Close() error {
	if st.err != nil {
		if st.err == errClosed {
			return nil
		}
		return st.err
	}
	err := st.scrub(nil, true)
	if err == nil {
		st.err = errClosed
	}
	return err
}

// Cut ends a text that was cut short (a body past its cap) rather than
// one that ended: the bytes held back, which the text cut off could have
// made part of an occurrence, are dropped, not passed on, and the
// placeholder of an occurrence still open is written. So a cut through a
// value never lets its first bytes out.
func (st *Stream) Cut() error {
	if st.err != nil {
		if st.err == errClosed {
			return nil
		}
		return st.err
	}
	st.buf = st.buf[:0]
	st.err = errClosed
	if !st.open {
		return nil
	}
	st.out = st.placeholder(st.out[:0])
	if _, err := st.w.Write(st.out); err != nil {
		st.err = err
		return err
	}
	return nil
}

// Redaction counts the placeholders that name a label.
type Redaction struct {
	Label string
	Count int
}

// Redactions returns the labels of the placeholders written so far, with
// how many name each, in the order the labels were added to the Set.
func (st *Stream) Redactions() []Redaction {
	var rs []Redaction
	for i, n := range st.counts {
		if n > 0 {
			rs = append(rs, Redaction{Label: st.labels[i], Count: n})
		}
	}
	return rs
}

// scrub takes p after the bytes held back, passes on every byte whose
// fate is decided and keeps the rest. With final nothing is undecided.
func (st *Stream) scrub(p []byte, final bool) error {
	m, values, labels := st.set.snapshot()
	st.labels = labels
	text := p
	if len(st.buf) > 0 {
		st.buf = append(st.buf, p...)
		text = st.buf
	}
	if len(m.forms) == 0 && !st.open {
		return st.pass(text, len(text)) // nothing to find: nothing held back
	}
	// Occurrences that start before limit are decided by text, or final
	// ends it.
	limit := len(text)
	if !final {
		limit = m.hold(text)
	}
	st.matches = m.find(st.matches[:0], text, 0, limit, st.before)
	if len(st.matches) == 0 && !st.open {
		return st.pass(text, limit)
	}
	slices.SortFunc(st.matches, func(a, b match) int {
		if a.start != b.start {
			return a.start - b.start
		}
		return a.value - b.value
	})
	out, lit := st.unite(st.out[:0], text, values)
	// No occurrence that starts at limit or later can touch a union that
	// ends before it.
	if st.open && (st.end < limit || final) {
		out, lit = st.placeholder(out), st.end
	}
	if !st.open {
		out = append(out, text[lit:limit]...)
	}
	st.out = out
	return st.keep(text, limit, out)
}

// unite goes through the matches in the order they start, joining each to
// the open union when it overlaps or touches it, else writing the union's
// placeholder and the text up to the match to out, and opening a union of
// the match. It returns out and where the text not yet in out starts
// (what an open union covers is never written).
func (st *Stream) unite(out, text []byte, values []int) ([]byte, int) {
	lit := 0
	for _, mt := range st.matches {
		if st.open && mt.start <= st.end {
			st.end = max(st.end, mt.end)
			st.join(values[mt.value])
			continue
		}
		if st.open {
			out, lit = st.placeholder(out), st.end
		}
		out = append(out, text[lit:mt.start]...)
		st.open, st.end, st.names = true, mt.end, append(st.names[:0], values[mt.value])
	}
	return out, lit
}

// join adds label to the open union's names unless it is there.
func (st *Stream) join(label int) {
	if !slices.Contains(st.names, label) {
		st.names = append(st.names, label)
	}
}

// placeholder appends the open union's placeholder to out and closes it.
func (st *Stream) placeholder(out []byte) []byte {
	st.open = false
	out = append(out, "<redacted:"...)
	for i, l := range st.names {
		if i > 0 {
			out = append(out, '+')
		}
		out = append(out, st.labels[l]...)
		for len(st.counts) <= l {
			st.counts = append(st.counts, 0)
		}
		st.counts[l]++
	}
	return append(out, '>')
}

// pass writes text[:limit] on and keeps the rest.
func (st *Stream) pass(text []byte, limit int) error {
	return st.keep(text, limit, text[:limit])
}

// keep writes out and keeps text[limit:] as the bytes held back.
func (st *Stream) keep(text []byte, limit int, out []byte) error {
	if limit > 0 {
		st.before = int(text[limit-1])
	}
	if st.open {
		st.end -= limit
	}
	if len(out) > 0 {
		if _, err := st.w.Write(out); err != nil {
			st.err = err
			return err
		}
	}
	// text is p or buf; copy handles buf's own tail.
	st.buf = append(st.buf[:0], text[limit:]...)
	return nil
}

// Scrub returns text with every occurrence of a form replaced, and the
// redactions made: the output of a Stream written text whole and closed.
func (s *Set) Scrub(text []byte) ([]byte, []Redaction) {
	return s.scrubWhole(text, (*Stream).Close)
}

// ScrubCut is Scrub for a text cut short (see Stream.Cut): what could be
// the start of an occurrence at its end is dropped.
func (s *Set) ScrubCut(text []byte) ([]byte, []Redaction) {
	return s.scrubWhole(text, (*Stream).Cut)
}

func (s *Set) scrubWhole(text []byte, end func(*Stream) error) ([]byte, []Redaction) {
	var b bytes.Buffer
	b.Grow(len(text))
	st := s.NewStream(&b)
	_, _ = st.Write(text) // a bytes.Buffer does not fail
	_ = end(st)
	return b.Bytes(), st.Redactions()
}
