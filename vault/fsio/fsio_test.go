package fsio_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arca-secrets/arca/vault/fsio"
)

func TestReadFileBounds(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		size int
		ok   bool
	}{{"empty", 0, true}, {"at the bound", 16, true}, {"one over", 17, false}, {"far over", 4096, false}} {
		p := filepath.Join(dir, tc.name)
		if err := os.WriteFile(p, []byte(strings.Repeat("s", tc.size)), 0o600); err != nil {
			t.Fatal(err)
		}
		b, err := fsio.ReadFile(p, 16)
		switch {
		case tc.ok && (err != nil || len(b) != tc.size):
			t.Errorf("%s: got %d bytes, %v", tc.name, len(b), err)
		case !tc.ok && !errors.Is(err, fsio.ErrTooLarge):
			t.Errorf("%s: err = %v, want too large", tc.name, err)
		case !tc.ok && strings.Contains(err.Error(), "sss"):
			t.Errorf("%s: error quotes the contents: %v", tc.name, err)
		}
	}
}

// A device that never ends (what a stat-then-read would read forever) is
// refused after max+1 bytes.
func TestReadFileEndless(t *testing.T) {
	done := make(chan error, 1)
	go func() {
		_, err := fsio.ReadFile("/dev/zero", 1<<20)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, fsio.ErrTooLarge) {
			t.Fatalf("err = %v, want too large", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("read of /dev/zero did not stop")
	}
}

func TestReadFileMissing(t *testing.T) {
	if _, err := fsio.ReadFile(filepath.Join(t.TempDir(), "nope"), 10); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v, want not exist", err)
	}
}

func TestReadStringBounds(t *testing.T) {
	for _, tc := range []struct {
		in   string
		hint int64
		ok   bool
	}{{"", 0, true}, {"abcd", 4, true}, {"abcd", 1 << 40, true}, {"abcde", 4, false}, {"abcde", -1, false}} {
		got, err := fsio.ReadString(strings.NewReader(tc.in), 4, tc.hint)
		switch {
		case tc.ok && (err != nil || got != tc.in):
			t.Errorf("%q: got %q, %v", tc.in, got, err)
		case !tc.ok && !errors.Is(err, fsio.ErrTooLarge):
			t.Errorf("%q: err = %v, want too large", tc.in, err)
		}
	}
}

// Read takes a regular file's size from a stat for its buffer, and still
// reads what is there when that size is wrong: a file that grew after the
// stat is read whole, and one past the bound refused. Other readers (a
// pipe, a buffer) are read in full as well.
func TestReadSizedFromStat(t *testing.T) {
	p := filepath.Join(t.TempDir(), "in")
	if err := os.WriteFile(p, []byte(strings.Repeat("a", 1000)), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	// It grows after the stat Read sees.
	grown := strings.Repeat("a", 1000) + strings.Repeat("b", 3000)
	if err := os.WriteFile(p, []byte(grown), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := fsio.Read(staleStat{f, fi}, 1<<20)
	if err != nil || string(b) != grown {
		t.Fatalf("Read of a grown file: %d bytes, %v; want %d", len(b), err, len(grown))
	}
	if _, err := f.Seek(0, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := fsio.Read(staleStat{f, fi}, 3999); !errors.Is(err, fsio.ErrTooLarge) {
		t.Fatalf("Read past the bound: %v, want too large", err)
	}
	if b, err := fsio.Read(strings.NewReader(grown), 4000); err != nil || string(b) != grown {
		t.Fatalf("Read of a reader without Stat: %d bytes, %v", len(b), err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() { w.WriteString(grown); w.Close() }()
	if b, err := fsio.Read(r, 4000); err != nil || string(b) != grown {
		t.Fatalf("Read of a pipe: %d bytes, %v", len(b), err)
	}
	r.Close()
}

// staleStat is a file whose Stat says what it said before it grew.
type staleStat struct {
	*os.File
	fi os.FileInfo
}

func (s staleStat) Stat() (os.FileInfo, error) { return s.fi, nil }

// LockDir holds the directory itself: another flock on it is refused
// until the holder unlocks, and no file is left in it.
func TestLockDir(t *testing.T) {
	dir := t.TempDir()
	unlock, err := fsio.LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	other, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := syscall.Flock(int(other.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != syscall.EWOULDBLOCK {
		t.Fatalf("a second flock while held: %v, want EWOULDBLOCK", err)
	}
	unlock()
	if err := syscall.Flock(int(other.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatalf("a second flock after unlock: %v", err)
	}
	if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
		t.Fatalf("the directory holds %v (%v)", ents, err)
	}
	if _, err := fsio.LockDir(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("LockDir of a missing directory succeeded")
	}
}
