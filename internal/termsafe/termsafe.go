// Package termsafe keeps text that arca did not write from driving a
// terminal: a server's answer, a line of a trail, a file's name. A control
// character (C0, DEL, C1) sent to a terminal can erase lines above it,
// retitle the window or write the clipboard; shown escaped, it is only
// text.
//
//	Quote   s as it is when every rune is printable, else a quoted Go
//	        string literal: a field of a table, whose edges must show
//	Escape  s with each rune that is not printable, and each byte that is
//	        not UTF-8, written as its escape, in place: a message
//	Writer  a stream of lines with every control character but newline
//	        and tab escaped, however the writes cut it: what a message or
//	        report line that forgot the two above still passes through
//
// Printable is strconv.IsPrint: letters, marks, numbers, punctuation,
// symbols and the ASCII space; not a tab, a newline, a format character
// (a bidirectional override) or a line separator. Each escape is one a Go
// string literal reads back: \n, \x1b, \u0085, \U000e0001 and \xff for a
// byte that is not UTF-8. DEL and C1 are written \u007f and \u0085, which
// a JSON string reads back too, so JSON that passes through a Writer stays
// the same JSON.
package termsafe

import (
	"io"
	"strconv"
	"sync"
	"unicode/utf8"
)

// Printable reports whether r is shown as it is.
func Printable(r rune) bool { return strconv.IsPrint(r) }

// control reports whether r is a control character: C0, DEL or C1.
func control(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) }

// Quote is s as it is when every rune of it is printable, else s as a
// quoted Go string literal with every rune that is not printable escaped.
func Quote(s string) string {
	if clean(s, Printable) {
		return s
	}
	b := []byte{'"'}
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		default:
			b = appendRune(b, s[i:i+n], r, Printable)
		}
		i += n
	}
	return string(append(b, '"'))
}

// Escape is s with every rune that is not printable, and every byte that
// is not UTF-8, replaced by its escape; the rest stays as it is.
func Escape(s string) string {
	if clean(s, Printable) {
		return s
	}
	var b []byte
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		b = appendRune(b, s[i:i+n], r, Printable)
		i += n
	}
	return string(b)
}

// clean reports whether s is UTF-8 whose every rune keep keeps.
func clean(s string, keep func(rune) bool) bool {
	for i, r := range s {
		if !keep(r) {
			return false
		}
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				return false
			}
		}
	}
	return true
}

// appendRune appends the rune r, read as raw, as it is when keep keeps
// it, else its escape (raw's byte when it is not UTF-8).
func appendRune(b []byte, raw string, r rune, keep func(rune) bool) []byte {
	switch {
	case r == utf8.RuneError && len(raw) == 1:
		return append(b, '\\', 'x', hex[raw[0]>>4], hex[raw[0]&0xf])
	case keep(r):
		return append(b, raw...)
	case r == 0x7f || (r >= 0x80 && r <= 0x9f):
		return append(b, '\\', 'u', '0', '0', hex[r>>4], hex[r&0xf])
	}
	q := strconv.QuoteRuneToASCII(r) // '\n', '\x1b', '\u2028', '\U000e0001'
	return append(b, q[1:len(q)-1]...)
}

const hex = "0123456789abcdef"

// Writer writes to w with every control character but newline and tab,
// and every byte that is not UTF-8, escaped as Escape does. A rune cut in
// two by the writes (a bufio.Writer's buffer filled) is held back until
// the write that completes it; so the bytes of a rune left incomplete at
// the very end of the stream are never written. It is safe for use by
// several goroutines at once.
type Writer struct {
	mu    sync.Mutex
	w     io.Writer
	carry []byte // the start of a rune the last write cut
}

// NewWriter returns a Writer to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// streamed reports whether r passes through a Writer as it is.
func streamed(r rune) bool { return r == '\n' || r == '\t' || !control(r) }

// Write writes p to the underlying writer, escaped, in one write.
func (t *Writer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := p
	if len(t.carry) > 0 {
		b = append(t.carry, p...)
		t.carry = nil
	}
	if cut := incomplete(b); cut < len(b) {
		t.carry = append([]byte(nil), b[cut:]...)
		b = b[:cut]
	}
	if !clean(string(b), streamed) {
		var esc []byte
		for i := 0; i < len(b); {
			r, n := utf8.DecodeRune(b[i:])
			esc = appendRune(esc, string(b[i:i+n]), r, streamed)
			i += n
		}
		b = esc
	}
	if len(b) > 0 {
		if _, err := t.w.Write(b); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// incomplete is where the rune b ends with starts when b ends before
// that rune does; len(b) when b ends with a whole rune (or bytes that
// cannot start one).
func incomplete(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return i
			}
			break
		}
	}
	return len(b)
}
