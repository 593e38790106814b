package file

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/arca-secrets/arca/vault/fsio"
	"github.com/arca-secrets/arca/vault/identity"
)

// A vault file is read whole, so its size is bounded, and no write may
// make a vault that a read refuses: a write that would take the file past
// maxVaultFile is refused before it is approved, and nothing changes.
// Reads accept maxVaultSlack more than that, which is more than any one
// write adds (a record line is under 90 KiB, a header under 256 KiB), and a
// write that does not grow the file is never refused. So a vault that is
// already past maxVaultFile (one an earlier arca let grow, or one copied
// together by hand) still opens, and rm, or a smaller value, shrinks it.
const (
	maxVaultFile  = 1 << 30
	maxVaultSlack = 1 << 20
)

// options are what a handle's reads and writes are bounded by, and the
// directory sync its writes end with. Open uses defaultOptions; tests lower
// the bounds to reach them cheaply, and watch the syncs.
type options struct {
	maxRead  int64 // a larger file is refused on read
	maxWrite int64 // a write may grow the file to at most this
	syncDir  func(dir string) error
	// Tests make these fail; nil is os.Rename and (*os.File).Sync.
	rename   func(oldpath, newpath string) error
	syncFile func(*os.File) error
	paged    paging         // which files a read reads by pages
	keys     *identity.Keys // loads the identity file; nil: a plain file only
}

// paging is when and how a file is read by pages (pages.go); the zero
// value reads every file whole.
type paging struct {
	from     int64 // files of at least this size are read by pages (0: none)
	pageSize int   // bytes a read reads
	budget   int   // bytes the pages of one open may read in all
}

func defaultOptions() options {
	return options{
		maxRead: maxVaultFile + maxVaultSlack, maxWrite: maxVaultFile, syncDir: fsio.SyncDir,
		paged: paging{from: pagedFrom, pageSize: pageSize, budget: maxPaged},
	}
}

// errTooLarge is a write stopped at its bound.
var errTooLarge = errors.New("past the bound")

// bound is the most a write may make of a vault file that is old bytes
// now: o.maxWrite, or old when it is larger already, so that a write that
// does not grow the file is never refused. A commit's old is the file with
// the commit's mark in its header (commits.go), a few bytes: that growth,
// at most a few KiB in all, never makes it refused either.
func (o options) bound(old int64) int64 { return max(o.maxWrite, old) }

// limitWriter passes at most left bytes on to w. A write that would take
// it past that fails with errTooLarge and passes nothing on.
type limitWriter struct {
	w    io.Writer
	left int64
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if !l.take(len(p)) {
		return 0, errTooLarge
	}
	return l.w.Write(p)
}

// WriteString is Write of a string, passed on without a copy when w takes
// strings (an *os.File does): a buffered writer hands a long span of the
// record lines (lineWriter.entries) on this way rather than copy it
// through its buffer.
func (l *limitWriter) WriteString(s string) (int, error) {
	if !l.take(len(s)) {
		return 0, errTooLarge
	}
	return io.WriteString(l.w, s)
}

// take counts n more bytes against the bound, if they fit.
func (l *limitWriter) take(n int) bool {
	if int64(n) > l.left {
		return false
	}
	l.left -= int64(n)
	return true
}

// tooLargeWrite is the error of a write refused at the bound.
func (o options) tooLargeWrite(path string) error {
	return fmt.Errorf("vault %s would grow over its limit of %d bytes; nothing was changed (destroy records or their earlier versions to make room)", path, o.maxWrite)
}
