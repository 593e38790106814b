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
	var h [2 * sha256.Size]byte
	linkInto(&h, line)
	return string(h[:])
}

// linkInto puts the link of line into h, allocating nothing.
func linkInto(h *[2 * sha256.Size]byte, line []byte) {
	sum := sha256.Sum256(line)
	hex.Encode(h[:], sum[:])
}

// Chained is a sink that several writers (processes) append to while it
// keeps one chain. Append takes the sink's lock, learns the seq and the
// link (hex) of the last event in it (0 and nil when it holds none), has
// enc make the next line of them, writes it, and lets go. prev is valid
// only during the call.
type Chained interface {
	Append(enc LineEncoder) error
}

// LineEncoder makes the next line of a chained stream, its newline
// included, from the seq and link of the line before it.
type LineEncoder interface {
	EncodeLine(lastSeq uint64, prev []byte) []byte
}

// MaxLine bounds an event line: what a reader of a trail reads as one line
// at most. arca writes far shorter ones (a request line is at most 1 MiB);
// a longer line is not an event of arca's.
const MaxLine = 4 << 20

// Append implements Chained: under an exclusive lock on the file, so
// processes appending at once keep one chain and one seq. The last event
// is read back from the file only when someone else wrote since this
// process last did.
func (a *File) Append(enc LineEncoder) error {
	if err := lockFile(a.f); err != nil {
		return fmt.Errorf("lock the audit file: %w", err)
	}
	defer unlockFile(a.f)
	fi, err := a.f.Stat()
	if err != nil {
		return err
	}
	if !a.known || fi.Size() != a.end {
		if a.lastSeq, a.hasPrev, err = lastEvent(a.f, fi.Size(), &a.prev); err != nil {
			return err
		}
	}
	var prev []byte
	if a.hasPrev {
		prev = a.prev[:]
	}
	b := enc.EncodeLine(a.lastSeq, prev)
	size := fi.Size()
	if !a.known || size != a.end {
		// lastEvent may have cut a torn line off.
		if fi, err = a.f.Stat(); err != nil {
			return err
		}
		size = fi.Size()
	}
	n, err := a.f.Write(b)
	if err != nil {
		a.known = false
		return err
	}
	ln := b[:len(b)-1]
	a.end, a.known, a.lastSeq, a.hasPrev = size+int64(n), true, SeqOf(ln), true
	linkInto(&a.prev, ln)
	return nil
}

// lastEvent reads the last whole line of f, whose size is size: its seq
// (0 when it has none) and its link. A line cut short at the end of the
// file (a crash, a full disk, in the middle of a write) was never a whole
// event: it is cut off, under the lock, so that the next event follows the
// last whole one and the trail verifies.
//
// It reads backward from the end in pages (see lastNewline): a process
// appending to a long trail reads a page or two of it, not its tail.
func lastEvent(f *os.File, size int64, link *[2 * sha256.Size]byte) (seq uint64, has bool, err error) {
	if size == 0 {
		return 0, false, nil
	}
	nl, _, err := lastNewline(f, size)
	if err != nil {
		return 0, false, err
	}
	if nl != size-1 {
		// The file ends in a torn line: cut it off, after the last newline.
		if nl < 0 && size > MaxLine+1 {
			return 0, false, fmt.Errorf("the audit file ends in a line longer than %d bytes: not an event arca wrote", MaxLine)
		}
		if err := f.Truncate(nl + 1); err != nil {
			return 0, false, fmt.Errorf("cut the audit file's torn last line: %w", err)
		}
		if size = nl + 1; size == 0 {
			return 0, false, nil
		}
	}
	// The last whole line ends at size-1, its newline; it starts after the
	// newline before that one, or at the start of the file.
	start, line, err := lastNewline(f, size-1)
	if err != nil {
		return 0, false, err
	}
	if start < 0 && size-1 > MaxLine {
		return 0, false, fmt.Errorf("the audit file ends in a line longer than %d bytes: not an event arca wrote", MaxLine)
	}
	linkInto(link, line)
	return SeqOf(line), true, nil
}

// tailPage is the first page lastNewline reads; it doubles while the
// line is longer.
const tailPage = 4 << 10

// lastNewline finds the last newline in f before offset end, reading
// backward: a page, then twice as much while none is found, up to
// MaxLine+1 bytes (a line and its newline). It returns the newline's
// offset and the bytes after it up to end, or -1 and the bytes read when
// there is none in reach.
func lastNewline(f *os.File, end int64) (int64, []byte, error) {
	for n := min(end, tailPage); ; n = min(end, 2*n, MaxLine+1) {
		buf := make([]byte, n)
		if _, err := f.ReadAt(buf, end-n); err != nil && !errors.Is(err, io.EOF) {
			return 0, nil, fmt.Errorf("read the audit file's last event: %w", err)
		}
		if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
			return end - n + int64(i), buf[i+1:], nil
		}
		if n == end || n == MaxLine+1 {
			return -1, buf, nil
		}
	}
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
