// Package fsio holds the file-system steps that vaults, identities, pins and
// config files share: a bounded read, the writer lock, a directory sync.
//
// Every read of a file arca did not write itself goes through Read or
// ReadFile, which read at most max+1 bytes: a FIFO, /dev/zero or a file that
// grows while it is read can never make arca read without end.
package fsio

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
)

// ErrTooLarge is returned by Read and ReadFile for input over their bound.
var ErrTooLarge = errors.New("too large")

// Read reads r to its end, refusing more than limit bytes. A regular file
// (r has Stat) is read into a buffer of its size, so a large input is held
// once rather than grown into by doubling.
func Read(r io.Reader, limit int64) ([]byte, error) {
	size := int64(511)
	if st, ok := r.(interface{ Stat() (os.FileInfo, error) }); ok {
		if fi, err := st.Stat(); err == nil && fi.Mode().IsRegular() {
			size = fi.Size()
		}
	}
	b := make([]byte, 0, min(max(size, 0), limit)+1)
	lr := io.LimitReader(r, limit+1)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := lr.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("larger than %d bytes: %w", limit, ErrTooLarge)
	}
	return b, nil
}

// ReadString is Read into a string, for large inputs that are parsed in
// place: the bytes are read once and not copied again. sizeHint (a stat's
// size, say) sizes the buffer; it does not bound the read.
func ReadString(r io.Reader, maxLimit, sizeHint int64) (string, error) {
	var buf strings.Builder
	buf.Grow(int(min(max(sizeHint, 0), maxLimit)) + 1)
	if _, err := io.Copy(&buf, io.LimitReader(r, maxLimit+1)); err != nil {
		return "", err
	}
	if int64(buf.Len()) > maxLimit {
		return "", fmt.Errorf("larger than %d bytes: %w", maxLimit, ErrTooLarge)
	}
	return buf.String(), nil
}

// ReadFile reads the file at path, refusing one over max bytes. Its errors
// name the path, never the contents.
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := Read(f, max)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// Lock takes an exclusive flock on the file at path, creating it (mode
// 0600) when missing. The kernel releases it when the holder exits or dies,
// so there is never a stale lock to wait out.
func Lock(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	return flock(f, path)
}

// LockDir takes an exclusive flock on the directory dir itself, as Lock
// does on a file, leaving no lock file behind.
func LockDir(dir string) (unlock func(), err error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("open directory to lock: %w", err)
	}
	return flock(d, dir)
}

// flock takes an exclusive flock on f, opened at path, and closes f if it
// cannot.
func flock(f *os.File, path string) (unlock func(), err error) {
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}

// SyncDir makes a rename or create in dir durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}
