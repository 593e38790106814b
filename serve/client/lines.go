package client

import (
	"errors"
	"io"

	"github.com/arca-secrets/arca/internal/ndjson"
)

// Caps on what the client reads from serve in one line: it never holds
// more. A response is at most some 6 times its largest value (64 KiB
// escaped) or a list of 10,000 records; 8 MiB leaves room. An event is
// capped as every reader of the audit wire caps it (audit.MaxLine).
const maxResponse = 8 << 20

// lineReader splits a stream into lines of at most max bytes before the
// newline, without holding more: a longer line is skipped to its newline
// and reported as errLong, and the stream goes on (ndjson.Resync), so the
// pipe serve writes to is always drained.
type lineReader struct{ r *ndjson.Reader }

var errLong = ndjson.ErrTooLong

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{ndjson.NewReader(r, max, ndjson.Resync)}
}

// next returns the next whole line without its newline; the slice is valid
// until the next call. A last line without a newline is the end of the
// stream cut short: it is dropped, and io.EOF returned.
func (l *lineReader) next() ([]byte, error) {
	line, err := l.r.Next()
	if errors.Is(err, ndjson.ErrCut) {
		return nil, io.EOF
	}
	return line, err
}

// rest is what is left of the stream, to drain.
func (l *lineReader) rest() io.Reader { return l.r.Rest() }
