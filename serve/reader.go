package serve

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// lineReader splits stdin into request lines without ever holding more than
// max bytes of one line: a longer line is reported as oversized and skipped
// to its newline. bufio.Scanner cannot do this (it stops for good on a token
// over its limit).
type lineReader struct {
	r   *bufio.Reader
	max int
	buf []byte
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// errTooLong reports a line over the cap; the reader has skipped past it.
var errTooLong = errors.New("line too long")

// next returns the next line without its "\n". The slice is valid until the
// next call. At the end of input it returns io.EOF; a last line without a
// newline is returned first.
func (l *lineReader) next() ([]byte, error) {
	l.buf = l.buf[:0]
	for {
		chunk, err := l.r.ReadSlice('\n')
		if len(l.buf)+len(chunk) > l.max+1 { // +1: the newline does not count
			return nil, l.skip(err)
		}
		switch {
		case err == nil:
			if len(l.buf) == 0 {
				return chunk[:len(chunk)-1], nil // no copy in the common case
			}
			l.buf = append(l.buf, chunk[:len(chunk)-1]...)
			return l.buf, nil
		case errors.Is(err, bufio.ErrBufferFull):
			l.buf = append(l.buf, chunk...)
		case errors.Is(err, io.EOF) && len(l.buf)+len(chunk) > 0:
			l.buf = append(l.buf, chunk...)
			if len(l.buf) > l.max {
				return nil, errTooLong
			}
			return l.buf, nil
		default:
			return nil, err
		}
	}
}

// skip discards the rest of an oversized line; err is the last ReadSlice's.
func (l *lineReader) skip(err error) error {
	l.buf = l.buf[:0]
	for errors.Is(err, bufio.ErrBufferFull) {
		_, err = l.r.ReadSlice('\n')
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return errTooLong
}

// lineReady reports whether a whole line is already buffered, so the next
// call to next will not block.
func (l *lineReader) lineReady() bool {
	n := l.r.Buffered()
	if n == 0 {
		return false
	}
	b, _ := l.r.Peek(n)
	return bytes.IndexByte(b, '\n') >= 0
}

// blank reports whether line holds only spaces, tabs and carriage returns.
func blank(line []byte) bool {
	return len(bytes.Trim(line, " \t\r")) == 0
}
