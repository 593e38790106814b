package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// fileValues are values a --file must hand over byte for byte: newlines,
// quotes, template braces, NUL (valid UTF-8, and no variable can hold it),
// no trailing newline, and one at the size limit.
var fileValues = [][]byte{
	[]byte("-----BEGIN KEY-----\nMIIB'\"{{.x}}$HOME\n-----END KEY-----"),
	[]byte("a\x00b\x00"),
	[]byte("\x00"),
	[]byte("{{ .Secret }}"),
	[]byte("ends in newline\n"),
	[]byte("\r\n\r\n"),
	[]byte("zwölf ✓ 秘密 🔑"),
	bytes.Repeat([]byte("k\x00'\"\n"), 65536/5),
}

// Every value reaches the child's file as is.
func TestRunFileHostileValues(t *testing.T) {
	h := newArcaHome(t)
	h.putAll(t, fileValues)
	var flags []string
	var script strings.Builder
	for i := range fileValues {
		flags = append(flags, "--file", fmt.Sprintf("V%d=arca://t/x%d", i, i))
		fmt.Fprintf(&script, "cp \"$V%d\" out%d || exit 9\n", i, i)
	}
	h.run(t, nil, "arca", append(append([]string{"run"}, flags...), "--", "sh", "-c", script.String())...)
	for i, v := range fileValues {
		got, err := os.ReadFile(filepath.Join(h.dir, fmt.Sprintf("out%d", i)))
		if err != nil || !bytes.Equal(got, v) {
			t.Errorf("value %d: the file held %q (%v), want %q", i, got, err, v)
		}
	}
}

// fileChild is sh that writes the path of its file $K to path.txt, then
// runs what follows.
const fileChild = `printf %s "$K" > path.txt || exit 9; `

// fileGone fails unless the file whose path the child wrote to path.txt,
// and its directory, are gone; it returns the path.
func (h *arcaHome) fileGone(t *testing.T, how string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(h.dir, "path.txt"))
	if err != nil {
		t.Fatalf("%s: the child wrote no path: %v", how, err)
	}
	p := string(b)
	if filepath.Base(p) != "K" || !strings.HasPrefix(filepath.Base(filepath.Dir(p)), "arca-run-") {
		t.Fatalf("%s: the child's K is %q, want …/arca-run-*/K", how, p)
	}
	for _, q := range []string{p, filepath.Dir(p)} {
		if _, err := os.Lstat(q); !os.IsNotExist(err) {
			t.Errorf("%s: %s is left behind (%v)", how, q, err)
		}
	}
	return p
}

// The file is removed when the child exits, whatever its status, and
// when it is killed by a signal.
func TestRunFileRemovedWhenTheChildExits(t *testing.T) {
	h := newArcaHome(t)
	h.put(t, "arca://app/k", []byte("k-CANARY"))
	for script, want := range map[string]int{
		"cat \"$K\" >/dev/null":    0,
		"exit 7":                   7,
		"kill -KILL $$":            137,
		"kill -TERM $$":            143,
		"rm -f \"$K\"; exit 0":     0, // the child may remove its file itself
		"chmod 0 \"$K\"; exit 0":   0,
		"mkdir \"$K.d\"; exit 0":   0, // or add to the directory
		"echo x >> \"$K\"; exit 0": 0,
	} {
		_, st, stderr := h.status(t, nil, "arca", "run", "--file", "K=arca://app/k", "--", "sh", "-c", fileChild+script)
		if st != want || strings.Contains(stderr, "CANARY") {
			t.Errorf("%s: arca exited %d (stderr %q), want %d", script, st, stderr, want)
		}
		h.fileGone(t, script)
	}
}

// SIGINT, SIGTERM and SIGHUP sent to arca reach the child; once it exited
// of them (or of its own accord) the file is gone. The run masks (the
// file's value is registered), and "ready" reaches the test at once.
func TestRunFileRemovedAfterASignalToArca(t *testing.T) {
	h := newArcaHome(t)
	h.put(t, "arca://app/k", []byte("k-CANARY"))
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		for _, child := range []string{
			"echo ready; exec sleep 30",
			"trap 'kill $! 2>/dev/null; exit 40' INT TERM HUP; sleep 30 >/dev/null 2>&1 & echo ready; wait",
		} {
			cmd, _ := startArcaRun(t, h, "--file", "K=arca://app/k", "--", "sh", "-c", fileChild+child)
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			want := 128 + int(sig)
			if strings.HasPrefix(child, "trap") {
				want = 40
			}
			if got := waitStatus(t, cmd); got != want {
				t.Errorf("%v, child %q: arca exited %d, want %d", sig, child, got, want)
			}
			h.fileGone(t, sig.String())
		}
	}
}

// An arca killed outright (SIGKILL) cannot clean up: the directory is
// left, named arca-run-*, for the user to remove (docs/cli.md says so).
func TestRunFileLeftWhenArcaIsKilled(t *testing.T) {
	h := newArcaHome(t)
	h.put(t, "arca://app/k", []byte("k-CANARY"))
	cmd, _ := startArcaRun(t, h, "--file", "K=arca://app/k", "--", "sh", "-c", fileChild+"echo $$ > pid.txt; echo ready; exec sleep 30")
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if pid, err := os.ReadFile(filepath.Join(h.dir, "pid.txt")); err == nil { // the orphaned child
		if n, err := strconv.Atoi(strings.TrimSpace(string(pid))); err == nil {
			_ = syscall.Kill(n, syscall.SIGKILL)
		}
	}
	b, err := os.ReadFile(filepath.Join(h.dir, "path.txt"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(string(b))
	defer os.RemoveAll(dir)
	if got, err := os.ReadFile(string(b)); err != nil || string(got) != "k-CANARY" || !strings.HasPrefix(filepath.Base(dir), "arca-run-") {
		t.Fatalf("after SIGKILL: %s holds %q (%v); want the file left, in arca-run-*", b, got, err)
	}
}

// With --mask, a reader that goes away does not kill arca before it
// removes the files: its copy fails, the child's next write too, and arca
// exits with the child's status.
func TestRunFileRemovedWhenStdoutCloses(t *testing.T) {
	h := newArcaHome(t)
	h.put(t, "arca://app/k", []byte("k-CANARY"))
	cmd := exec.Command("arca", "run", "--mask", "--file", "K=arca://app/k", "--", "sh", "-c", fileChild+"while :; do echo y || exit 3; done")
	cmd.Env, cmd.Dir = h.env, h.dir
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "y\n" {
		t.Fatalf("read %q, %v", line, err)
	}
	out.Close()
	if got := waitStatus(t, cmd); got != 128+int(syscall.SIGPIPE) && got != 3 {
		t.Errorf("arca exited %d, want the child's status (141 or 3)", got)
	}
	h.fileGone(t, "stdout closed")
}
