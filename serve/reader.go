package serve

import (
	"bytes"
	"errors"
	"io"

	"github.com/arca-secrets/arca/internal/ndjson"
)

// lineReader splits stdin into request lines without ever holding more than
// max bytes of one line: a longer line is reported as oversized and skipped
// to its newline (ndjson.Resync).
type lineReader struct{ r *ndjson.Reader }

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{ndjson.NewReader(r, max, ndjson.Resync)}
}

// errTooLong reports a line over the cap; the reader has skipped past it.
var errTooLong = ndjson.ErrTooLong

// next returns the next line without its "\n". The slice is valid until the
// next call. At the end of input it returns io.EOF; a last line without a
// newline is returned first.
func (l *lineReader) next() ([]byte, error) {
	line, err := l.r.Next()
	if errors.Is(err, ndjson.ErrCut) {
		return line, nil
	}
	return line, err
}

// lineReady reports whether a whole line is already buffered, so the next
// call to next will not block.
func (l *lineReader) lineReady() bool { return l.r.Ready() }

// blank reports whether line holds only spaces, tabs and carriage returns.
func blank(line []byte) bool {
	return len(bytes.Trim(line, " \t\r")) == 0
}
