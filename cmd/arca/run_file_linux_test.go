package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// On Linux, with /dev/shm a tmpfs, the files are there, and no warning is
// printed; arca's $TMPDIR and $XDG_RUNTIME_DIR do not matter then.
func TestRunFileInDevShm(t *testing.T) {
	var fs unix.Statfs_t
	if err := unix.Statfs("/dev/shm", &fs); err != nil || fs.Type != unix.TMPFS_MAGIC {
		t.Skip("/dev/shm is not a tmpfs here")
	}
	h := newArcaHome(t)
	h.put(t, "arca://app/k", []byte("k-CANARY"))
	runtime := filepath.Join(h.dir, "run")
	if err := os.Mkdir(runtime, 0o700); err != nil {
		t.Fatal(err)
	}
	h.env = append(h.env, "TMPDIR="+h.dir, "XDG_RUNTIME_DIR="+runtime)
	out, st, stderr := h.status(t, nil, "arca", "run", "--file", "K=arca://app/k", "--", "sh", "-c", fileChild+`stat -f -c %T "$K"`)
	if st != 0 || stderr != "" || string(out) != "tmpfs\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want a file on tmpfs and no warning", st, out, stderr)
	}
	p := h.fileGone(t, "exit")
	if !strings.HasPrefix(p, "/dev/shm/arca-run-") {
		t.Fatalf("the file was %s, want it under /dev/shm", p)
	}
}
