package inject

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// On Linux the files go to /dev/shm when it is a tmpfs, else to
// $XDG_RUNTIME_DIR when it is the user's own, else to $TMPDIR; only a
// directory that is not memory-backed carries a warning.
func TestFileParentsLinux(t *testing.T) {
	if ps := fileParents(func(string) string { return "" }); inMemory(shm) && (ps[0].dir != shm || ps[0].warning != "") {
		t.Errorf("/dev/shm is a tmpfs, but the first parent is %+v", ps[0])
	}
	disk := t.TempDir()
	if inMemory(disk) {
		t.Skipf("%s is memory-backed: no disk to test the fallbacks with", disk)
	}
	runtime := filepath.Join(disk, "run")
	tmp := filepath.Join(disk, "tmp")
	for _, d := range []string{runtime, tmp} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"XDG_RUNTIME_DIR": runtime, "TMPDIR": tmp}
	getenv := func(k string) string { return env[k] }
	noShm := filepath.Join(disk, "no-shm")
	ps := fileParentsFrom(noShm, getenv)
	if len(ps) != 2 || ps[0].dir != runtime || ps[1].dir != tmp {
		t.Fatalf("parents %+v, want $XDG_RUNTIME_DIR then $TMPDIR", ps)
	}
	for _, p := range ps {
		if !strings.HasPrefix(p.warning, "the --file values are on disk, in "+p.dir+" ") {
			t.Errorf("%s is on disk but its warning is %q", p.dir, p.warning)
		}
	}
	// A $XDG_RUNTIME_DIR others can read is passed over.
	if err := os.Chmod(runtime, 0o755); err != nil {
		t.Fatal(err)
	}
	if ps := fileParentsFrom(noShm, getenv); len(ps) != 1 || ps[0].dir != tmp {
		t.Fatalf("parents %+v, want $TMPDIR alone", ps)
	}
	// No $TMPDIR: /tmp.
	env = nil
	if ps := fileParentsFrom(noShm, getenv); len(ps) != 1 || ps[0].dir != "/tmp" {
		t.Fatalf("parents %+v, want /tmp", ps)
	}
	// A memory-backed /dev/shm comes first, with no warning.
	if inMemory(shm) {
		if ps := fileParentsFrom(shm, getenv); ps[0].dir != shm || ps[0].warning != "" {
			t.Fatalf("parents %+v, want /dev/shm first", ps)
		}
	}
}
