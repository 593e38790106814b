// Package ndjson splits a stream into lines, each bounded: a Reader never
// holds more than its cap of one line, however long the line or the
// stream. bufio.Scanner cannot be that reader: it stops for good on a
// token over its limit, and stops draining the pipe it reads.
//
// A line over the cap is ErrTooLong, and the Reader's policy says what
// comes next:
//
//	Resync  the rest of the line is read and dropped, never held, and
//	        the next call returns the line after it: a request loop
//	        answers the long line and carries on
//	Fail    nothing more is read: the stream is not one the caller
//	        trusts past that line (an audit trail, a PDP's verdicts)
//
// A last line with no newline is returned with ErrCut: a request loop
// takes it as a line, a reader of a stream that ends every line drops it
// or reports it.
package ndjson

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// Policy is what a Reader does after a line over its cap.
type Policy uint8

const (
	Resync Policy = iota // skip to the next newline and go on
	Fail                 // read nothing more: every later call is ErrTooLong
)

var (
	// ErrTooLong is a line longer than the cap (its newline not counted).
	ErrTooLong = errors.New("line too long")
	// ErrCut comes with a last line that has no newline.
	ErrCut = errors.New("the last line has no newline")
)

// bufSize is the read buffer: a line that fits is returned without a copy.
const bufSize = 64 << 10

// gatheredKeep is how large a gathered long line's buffer is kept for the
// next; a larger one is let go.
const gatheredKeep = 1 << 20

// Reader reads lines of at most max bytes before their newline.
type Reader struct {
	br     *bufio.Reader
	max    int
	policy Policy
	failed bool
	long   []byte // a line longer than br's buffer, gathered
}

// NewReader returns a Reader of r whose lines hold at most max bytes.
func NewReader(r io.Reader, max int, p Policy) *Reader {
	return newReaderSize(r, max, p, min(bufSize, max+1))
}

// newReaderSize is NewReader with a read buffer of size bytes (bufio's
// minimum is 16).
func newReaderSize(r io.Reader, max int, p Policy, size int) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, size), max: max, policy: p}
}

// Next returns the next line without its newline; the slice is valid until
// the next call. At the end of the stream it returns io.EOF, after a last
// line without a newline, which comes with ErrCut. A line over the cap is
// ErrTooLong (see the Policy); an error of the stream is returned as is.
func (l *Reader) Next() ([]byte, error) {
	l.reset()
	if l.failed {
		return nil, ErrTooLong
	}
	for {
		chunk, err := l.br.ReadSlice('\n')
		n := len(l.long) + len(chunk)
		if err == nil {
			n-- // the newline does not count
		}
		if n > l.max {
			return nil, l.tooLong(err)
		}
		switch {
		case err == nil && len(l.long) == 0:
			return chunk[:len(chunk)-1], nil // no copy in the common case
		case err == nil:
			l.long = append(l.long, chunk[:len(chunk)-1]...)
			return l.long, nil
		case errors.Is(err, bufio.ErrBufferFull):
			l.long = append(l.long, chunk...)
		case errors.Is(err, io.EOF) && n > 0:
			l.long = append(l.long, chunk...)
			return l.long, ErrCut
		default:
			return nil, err
		}
	}
}

// reset wipes the last gathered line, which may have held a value, and
// lets a huge buffer go.
func (l *Reader) reset() {
	clear(l.long)
	l.long = l.long[:0]
	if cap(l.long) > gatheredKeep {
		l.long = nil
	}
}

// tooLong ends a line over the cap; err is the last ReadSlice's. Resync
// reads past the rest of the line; an error of the stream meanwhile other
// than its end is returned instead.
func (l *Reader) tooLong(err error) error {
	l.reset()
	if l.policy == Fail {
		l.failed = true
		return ErrTooLong
	}
	for errors.Is(err, bufio.ErrBufferFull) {
		_, err = l.br.ReadSlice('\n')
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return ErrTooLong
}

// Ready reports whether a whole line is already buffered, so the next call
// to Next will not block.
func (l *Reader) Ready() bool {
	n := l.br.Buffered()
	if n == 0 {
		return false
	}
	b, _ := l.br.Peek(n)
	return bytes.IndexByte(b, '\n') >= 0
}

// Buffered is how many bytes of the stream are read and not yet returned.
func (l *Reader) Buffered() int { return l.br.Buffered() }

// Rest is the stream from where Next left it, buffered bytes first: to
// drain it, or to read it another way.
func (l *Reader) Rest() io.Reader { return l.br }
