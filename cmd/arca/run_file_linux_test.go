package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// On Linux the files go to /dev/shm when it is a tmpfs, with no warning;
// arca's $TMPDIR and $XDG_RUNTIME_DIR do not matter then. Where /dev/shm
// is not one, they go to $XDG_RUNTIME_DIR, with a warning when that is on
// disk (as it is here: a directory of the test's).
func TestRunFileInDevShm(t *testing.T) {
	var fs unix.Statfs_t
	shm := unix.Statfs("/dev/shm", &fs) == nil && fs.Type == unix.TMPFS_MAGIC
	h := newArcaHome(t)
	h.put(t, "arca://app/k", []byte("k-CANARY"))
	runtime := filepath.Join(h.dir, "run")
	if err := os.Mkdir(runtime, 0o700); err != nil {
		t.Fatal(err)
	}
	h.env = append(h.env, "TMPDIR="+h.dir, "XDG_RUNTIME_DIR="+runtime)
	out, st, stderr := h.status(t, nil, "arca", "run", "--file", "K=arca://app/k", "--", "sh", "-c", fileChild+`stat -f -c %T "$K"`)
	switch {
	case st != 0:
		t.Fatalf("exit %d, stdout %q, stderr %q", st, out, stderr)
	case shm && (stderr != "" || string(out) != "tmpfs\n"):
		t.Fatalf("stdout %q, stderr %q; want a file on tmpfs and no warning", out, stderr)
	case !shm && !strings.HasPrefix(stderr, "arca: warning: the --file values are on disk"):
		t.Fatalf("stderr %q; want the warning that the files are on disk", stderr)
	}
	p := h.fileGone(t, "exit")
	if want := map[bool]string{true: "/dev/shm/arca-run-", false: runtime + "/arca-run-"}[shm]; !strings.HasPrefix(p, want) {
		t.Fatalf("the file was %s, want it under %s", p, want)
	}
}
