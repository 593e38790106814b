package client

import (
	"bufio"
	"errors"
	"io"
)

// Caps on what the client reads from serve in one line: it never holds
// more. A response is at most some 6 times its largest value (64 KiB
// escaped) or a list of 10,000 records; 8 MiB leaves room. An event is
// capped as every reader of the audit wire caps it (audit.MaxLine).
const maxResponse = 8 << 20

// lineReader splits a stream into lines of at most max bytes before the
// newline, without holding more: a longer line is skipped to its newline
// and reported as errLong, and the stream goes on. bufio.Scanner would stop
// for good, and stop draining the pipe serve writes to.
type lineReader struct {
	r   *bufio.Reader
	max int
	buf []byte // a line longer than r's buffer, gathered
}

var errLong = errors.New("line too long")

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next whole line, newline included; the slice is valid
// until the next call. A last line without a newline is the end of the
// stream cut short: it is dropped, and io.EOF returned.
func (l *lineReader) next() ([]byte, error) {
	clear(l.buf) // the last long line, which may have held a value
	l.buf = l.buf[:0]
	if cap(l.buf) > 1<<20 {
		l.buf = nil // let a huge line go
	}
	for {
		chunk, err := l.r.ReadSlice('\n')
		if len(l.buf)+len(chunk) > l.max+1 {
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = l.r.ReadSlice('\n')
			}
			clear(l.buf)
			l.buf = l.buf[:0]
			if err != nil {
				return nil, err
			}
			return nil, errLong
		}
		switch {
		case err == nil && len(l.buf) == 0:
			return chunk, nil // no copy in the common case
		case err == nil:
			l.buf = append(l.buf, chunk...)
			return l.buf, nil
		case errors.Is(err, bufio.ErrBufferFull):
			l.buf = append(l.buf, chunk...)
		default:
			return nil, err
		}
	}
}
