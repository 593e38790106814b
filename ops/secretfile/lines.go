package secretfile

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// lineOf returns the 1-based line of offset off in data.
func lineOf(data []byte, off int64) int {
	off = min(max(off, 0), int64(len(data)))
	return 1 + bytes.Count(data[:off], []byte("\n"))
}

// checkUTF8 refuses data that is not UTF-8 text, naming the first bad line.
func checkUTF8(data []byte) error {
	if utf8.Valid(data) {
		return nil
	}
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n == 1 {
			return fmt.Errorf("line %d: not valid UTF-8", lineOf(data, int64(i)))
		}
		i += n
	}
	return nil
}

// lineCounter turns offsets into line numbers, counting forward from the
// last offset asked for, so a walk that asks in order counts each byte once.
type lineCounter struct {
	data []byte
	off  int64
	line int
}

func (l *lineCounter) at(off int64) int {
	off = min(max(off, 0), int64(len(l.data)))
	if off < l.off {
		l.off, l.line = 0, 1
	}
	l.line += bytes.Count(l.data[l.off:off], []byte("\n"))
	l.off = off
	return l.line
}
