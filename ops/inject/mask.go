package inject

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"sort"
)

// NewRedactor returns a writer that passes what is written to it on to w
// with every byte of every occurrence of a secret's value redacted (arca
// run --mask), a File secret's value too. Literals (an env file's values
// as written, no secrets) and empty values are ignored; of two secrets
// with the same value, the first named in secrets is the one shown.
//
// Every occurrence counts, those that overlap too: a span of the output
// covered by occurrences that overlap one another (share a byte) becomes
// one mark, <redacted:NAME> for one value and <redacted:A+B> when several
// values make it up, their names in the order they start, each once. An
// occurrence inside another one (a value that is part of a longer value
// there) adds no name. Occurrences that only touch (one ends where the
// next starts) stay two marks. So with A=xxxS and B=SECRET, "xxxSECRET"
// becomes <redacted:A+B>, "xxxSSECRET" <redacted:A><redacted:B>, and with
// A=aa, "aaaaa" becomes <redacted:A>.
//
// Matching is the same however the stream is cut into writes: bytes that
// could be the start of a value are held back (at most the longest value's
// length minus one) until the next write decides, or until Close, which
// writes them out. A mark is written when its span is decided, that is
// when no occurrence that starts in the bytes held back could extend it;
// the bytes it covers are not kept meanwhile, only the names.
//
// Close does not close w. A redactor is not safe for concurrent use.
func NewRedactor(w io.Writer, secrets []Materialized) io.WriteCloser {
	r := &redactor{w: w}
	seen := map[string]bool{}
	for _, m := range secrets {
		v := m.Value.Reveal()
		if m.Literal || len(v) == 0 || seen[string(v)] {
			continue
		}
		seen[string(v)] = true
		r.pats = append(r.pats, pattern{value: v, name: m.Name, mark: []byte("<redacted:" + m.Name + ">")})
	}
	// Longest first, so that the first complete match at a position is the
	// longest one, and any longer value still in play is seen before it.
	sort.SliceStable(r.pats, func(i, j int) bool { return len(r.pats[i].value) > len(r.pats[j].value) })
	for i, p := range r.pats {
		c := p.value[0]
		if len(r.byFirst[c]) == 0 {
			r.firsts = append(r.firsts, c)
		}
		r.byFirst[c] = append(r.byFirst[c], i)
	}
	return r
}

// next returns the index of the first byte of data at or after i that
// starts a value, or len(data). With one distinct first byte (one secret,
// the common case) it is bytes.IndexByte.
func (r *redactor) next(data []byte, i int) int {
	switch len(r.firsts) {
	case 0:
		return len(data)
	case 1:
		if j := bytes.IndexByte(data[i:], r.firsts[0]); j >= 0 {
			return i + j
		}
		return len(data)
	}
	for i < len(data) && len(r.byFirst[data[i]]) == 0 {
		i++
	}
	return i
}

type pattern struct {
	value []byte
	name  string
	mark  []byte // <redacted:name>
}

type redactor struct {
	w       io.Writer
	pats    []pattern  // longest value first
	byFirst [256][]int // indexes into pats, by the value's first byte
	firsts  []byte     // the distinct first bytes of the values
	pending []byte     // held back: could be the start of a value
	out     []byte     // reused output buffer
	err     error      // sticky: the first error of w, or errClosed

	// The span being redacted, whose end is not decided yet.
	open  bool
	end   int   // where it ends, counted from the start of pending
	names []int // the values it holds, by index into pats, in order
}

var errClosed = errors.New("redactor: write after close")

// Write redacts p and passes on everything that is decided. It reports
// len(p) unless w failed.
func (r *redactor) Write(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	r.pending = append(r.pending, p...)
	if err := r.flush(false); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close writes out what was held back: at the end of the stream, a partial
// value is just text.
func (r *redactor) Close() error {
	if r.err != nil {
		if r.err == errClosed {
			return nil
		}
		return r.err
	}
	err := r.flush(true)
	if err == nil {
		r.err = errClosed
	}
	return err
}

// flush scans pending, writes what is decided and keeps the undecided tail.
// With final set nothing is undecided.
func (r *redactor) flush(final bool) error {
	data := r.pending
	out := r.out[:0]
	lit := 0 // start of the literal run not yet copied to out, with no span open
	i := 0
scan:
	for {
		i = r.next(data, i)
		if r.open && i >= r.end {
			// No occurrence starts inside the span any more: it is
			// decided, and the bytes after it up to i are text.
			out, lit = r.closeSpan(out), r.end
		}
		if i == len(data) {
			break
		}
		rest := data[i:]
		for _, k := range r.byFirst[data[i]] {
			v := r.pats[k].value
			if r.open && i+len(v) <= r.end {
				break // this one and every shorter one lie inside the span
			}
			if len(rest) < len(v) {
				if !final && bytes.HasPrefix(v, rest) {
					break scan // undecided: hold back from i
				}
				continue
			}
			if bytes.Equal(rest[:len(v)], v) {
				if !r.open {
					out = append(out, data[lit:i]...)
					r.open, r.names = true, r.names[:0]
				}
				if !slices.Contains(r.names, k) {
					r.names = append(r.names, k)
				}
				r.end = i + len(v)
				break // every shorter value here lies inside this one
			}
		}
		i++
	}
	if r.open && i >= r.end {
		out, lit = r.closeSpan(out), r.end
	}
	if r.open {
		r.end -= i // the span goes on into what is held back
	} else {
		out = append(out, data[lit:i]...)
	}
	r.out = out
	// Keep the held-back tail at the front of pending's buffer.
	r.pending = append(r.pending[:0], data[i:]...)
	if len(out) == 0 {
		return nil
	}
	if _, err := r.w.Write(out); err != nil {
		r.err = err
		return err
	}
	return nil
}

// closeSpan appends the mark of the open span to out and closes it.
func (r *redactor) closeSpan(out []byte) []byte {
	r.open = false
	if len(r.names) == 1 {
		return append(out, r.pats[r.names[0]].mark...)
	}
	out = append(out, "<redacted:"...)
	for j, k := range r.names {
		if j > 0 {
			out = append(out, '+')
		}
		out = append(out, r.pats[k].name...)
	}
	return append(out, '>')
}
