package file

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
)

// A one-shot get (arca get) needs one record of the vault, and the record
// lines are sorted, so it need not read the file whole: a file of at least
// pagedFrom bytes is read by pages, as the binary search of find touches
// them (os.File.ReadAt, each read one page, the reads of one handle
// together at most maxPaged bytes). The header is read the same way, and the
// trailer as its last bytes. The search checks every line it reads as the
// search over lines in memory does (it is the same code, search).
//
// Pages never decide that a vault is corrupt or that a record is absent:
// a miss (proved by a pass over every line), a line that fails a check (whose
// error names its line number), a frame that does not parse, a read past
// maxPaged or one that comes back short, all read the record lines whole and
// answer as a read of the whole file does. A hit is served from pages only if
// the file's size and modification time are still those of the open (an
// edit in place, which no arca write makes, changes them); a vault replaced
// by rename meanwhile leaves the file read intact, and it is served as the
// vault it was at the open.
const (
	pagedFrom = 64 << 10
	pageSize  = 4 << 10
	maxPaged  = 4 << 20
)

// errPaged is a paged read that gave up: read the file whole instead.
var errPaged = errors.New("paged read gave up")

// pages is a file read by pages, remembered once read. Offsets are from
// base: a view of the record lines of a file shares the pages of the file.
type pages struct {
	*pageCache
	base int // where offset 0 is in the file
	n    int // the bytes from base the view holds
}

// pageCache holds the pages of one file read so far, and what it may still
// read.
type pageCache struct {
	r    io.ReaderAt
	size int            // page size
	end  int            // the file's size at the open
	read map[int][]byte // by page number
	left int            // bytes it may still read
}

func newPages(r io.ReaderAt, fileSize, pageSize, budget int) pages {
	c := &pageCache{r: r, size: pageSize, end: fileSize, read: map[int][]byte{}, left: budget}
	return pages{pageCache: c, n: fileSize}
}

// view is the n bytes of p from off on.
func (p pages) view(off, n int) pages { return pages{pageCache: p.pageCache, base: p.base + off, n: n} }

// page returns page i of the file, reading it when it has not been read.
// A page that comes back short (a file shrunk since the open) is an error.
func (c *pageCache) page(i int) ([]byte, error) {
	if b, ok := c.read[i]; ok {
		return b, nil
	}
	n := min(c.size, c.end-i*c.size)
	if n <= 0 || n > c.left {
		return nil, errPaged
	}
	c.left -= n
	b := make([]byte, n)
	if got, err := c.r.ReadAt(b, int64(i*c.size)); got < n {
		return nil, fmt.Errorf("%w: short read at page %d: %v", errPaged, i, err)
	}
	c.read[i] = b
	return b, nil
}

// span returns the bytes of the file at [from, to), file offsets within
// one page.
func (c *pageCache) span(from, to int) ([]byte, error) {
	i := from / c.size
	b, err := c.page(i)
	if err != nil {
		return nil, err
	}
	return b[from-i*c.size : to-i*c.size], nil
}

// lineAt implements lineSource.
func (p pages) lineAt(lo, at, hi int) (start, end int, line string, err error) {
	start = lo
	for to := p.base + at; to > p.base+lo; {
		from := max(p.base+lo, (to-1)/p.size*p.size)
		b, err := p.span(from, to)
		if err != nil {
			return 0, 0, "", err
		}
		if k := bytes.LastIndexByte(b, '\n'); k >= 0 {
			start = from + k + 1 - p.base
			break
		}
		to = from
	}
	var sb strings.Builder
	for from := p.base + start; ; {
		if from >= p.base+hi {
			return 0, 0, "", fmt.Errorf("%w: no line end", errPaged)
		}
		to := min(p.base+hi, (from/p.size+1)*p.size)
		b, err := p.span(from, to)
		if err != nil {
			return 0, 0, "", err
		}
		if k := bytes.IndexByte(b, '\n'); k >= 0 {
			end = from + k - p.base
			if sb.Len() == 0 {
				return start, end, string(b[:k]), nil
			}
			sb.Write(b[:k])
			return start, end, sb.String(), nil
		}
		sb.Write(b)
		from = to
	}
}

// readFrame reads the header line and the trailer of a vault file of size
// bytes by pages, and returns its contents with the record lines unread
// (c.unread, a view of p). ok is false when anything is not as arca writes
// it, or the header is longer than the pages may read: read the file whole,
// whose parse says what is wrong.
func readFrame(p pages) (c contents, ok bool) {
	_, nl, line, err := p.lineAt(0, 0, p.n)
	if err != nil || p.n-len(fileTrailer) < nl+1 {
		return contents{}, false
	}
	tailAt := p.n - len(fileTrailer) - 1 // the last record line's "\n", if any
	if tailAt <= nl {
		tailAt = nl + 1 // no record lines: the trailer alone
	}
	var tail strings.Builder
	for from := tailAt; from < p.n; {
		to := min(p.n, (from/p.size+1)*p.size)
		b, err := p.span(from, to)
		if err != nil {
			return contents{}, false
		}
		tail.Write(b)
		from = to
	}
	if want := "\n" + fileTrailer; tail.String() != want[len(want)-(p.n-tailAt):] {
		return contents{}, false
	}
	hdr, err := parseHeader(line)
	if err != nil {
		return contents{}, false
	}
	lines := p.view(nl+1, p.n-len(fileTrailer)-(nl+1))
	return contents{hdr: hdr, unread: &lines}, true
}
