package fsio_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
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
