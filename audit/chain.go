package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
)

// Link is the link an event carries to the one before it: the hex SHA-256
// of that event's line, its exact bytes without the newline.
func Link(line []byte) string {
	sum := sha256.Sum256(line)
	return hex.EncodeToString(sum[:])
}

// Chained is a sink that several writers (processes) append to while it
// keeps one chain. Append takes the sink's lock, learns the seq and the
// link of the last event in it (0 and "" when it holds none), writes the
// line that line makes of them, and lets go.
type Chained interface {
	Append(line func(lastSeq uint64, prev string) []byte) error
}

// MaxLine bounds an event line: what a reader of a trail reads as one line
// at most. arca writes far shorter ones (a request line is at most 1 MiB);
// a longer line is not an event of arca's.
const MaxLine = 4 << 20

// Append implements Chained: under an exclusive lock on the file, so
// processes appending at once keep one chain and one seq. The last event
// is read back from the file only when someone else wrote since this
// process last did.
func (a *File) Append(line func(lastSeq uint64, prev string) []byte) error {
	if err := lockFile(a.f); err != nil {
		return fmt.Errorf("lock the audit file: %w", err)
	}
	defer unlockFile(a.f)
	fi, err := a.f.Stat()
	if err != nil {
		return err
	}
	if !a.known || fi.Size() != a.end {
		if a.lastSeq, a.prev, a.torn, err = lastEvent(a.f, fi.Size()); err != nil {
			return err
		}
	}
	b := line(a.lastSeq, a.prev)
	if a.torn {
		// A line cut short (a crash mid-write) keeps its place; the next
		// event starts on a line of its own, linked to it.
		b = append([]byte{'\n'}, b...)
	}
	n, err := a.f.Write(b)
	a.end, a.known = fi.Size()+int64(n), err == nil
	if err != nil {
		return err
	}
	ln := bytes.TrimPrefix(b[:len(b)-1], []byte{'\n'})
	a.lastSeq, a.prev, a.torn = SeqOf(ln), Link(ln), false
	return nil
}

// lastEvent reads the last line of f, whose size is size: its seq (0 when
// it has none), its link, and whether the file ends in the middle of it.
func lastEvent(f *os.File, size int64) (seq uint64, link string, torn bool, err error) {
	if size == 0 {
		return 0, "", false, nil
	}
	n := min(size, MaxLine+1)
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, size-n); err != nil && !errors.Is(err, io.EOF) {
		return 0, "", false, fmt.Errorf("read the audit file's last event: %w", err)
	}
	torn = buf[len(buf)-1] != '\n'
	if !torn {
		buf = buf[:len(buf)-1]
	}
	line := buf[bytes.LastIndexByte(buf, '\n')+1:]
	return SeqOf(line), Link(line), torn, nil
}

// SeqOf is the seq of an event line as arca writes it (`{"v":1,"ts":"…",
// "seq":N,…`), or 0 when the line has none there.
func SeqOf(line []byte) uint64 {
	const key = `,"seq":`
	i := bytes.Index(line, []byte(key))
	if i < 0 || i > 64 {
		return 0
	}
	var seq uint64
	digits := line[i+len(key):]
	for j, c := range digits {
		switch {
		case c == ',' && j > 0 && j <= 20 && (digits[0] != '0' || j == 1):
			return seq
		case c < '0' || c > '9' || seq > (math.MaxUint64-9)/10:
			return 0
		}
		seq = seq*10 + uint64(c-'0')
	}
	return 0
}
