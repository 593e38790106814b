package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// What arca protects itself from: a child it starts (the command of arca
// run, serve's PDP) running as the same user, without privilege (nocaps).
// arca's own environment holds what the allowlist keeps from the child,
// its memory holds values it read; neither may be readable through /proc,
// and no descriptor arca inherited may reach the child.

// canaryEnv is what arca's parent hands it that no child may learn.
var canaryEnv = []string{"AWS_SECRET_ACCESS_KEY=canary-aws-7f3a", "GITHUB_TOKEN=canary-gh-7f3a"}

const canaryMark = "canary-"

// runUnprivileged runs `nocaps arca ARGS` in h with the canaries in
// arca's environment and returns stdout, the exit status and stderr.
func (h *arcaHome) runUnprivileged(t *testing.T, args ...string) ([]byte, int, string) {
	t.Helper()
	saved := h.env
	h.env = append(append([]string(nil), h.env...), canaryEnv...)
	defer func() { h.env = saved }()
	return h.status(t, nil, "nocaps", append([]string{"arca"}, args...)...)
}

// The child of arca run cannot read /proc/$PPID/environ, arca's: it
// never learns what the allowlist kept from it.
func TestRunChildCannotReadArcaEnviron(t *testing.T) {
	h := newArcaHome(t)
	out, st, stderr := h.runUnprivileged(t, "run", "--", "sh", "-c",
		`if cat /proc/$PPID/environ; then echo; echo environ-read; else echo environ-refused; fi`)
	if st != 0 {
		t.Fatalf("arca run: exit %d, stderr %q", st, stderr)
	}
	if bytes.Contains(out, []byte(canaryMark)) {
		t.Errorf("the child read arca's environment: %q", out)
	}
	if !bytes.HasSuffix(out, []byte("environ-refused\n")) {
		t.Errorf("the child could open /proc/$PPID/environ: %q", out)
	}
	if !strings.Contains(stderr, "Permission denied") {
		t.Errorf("cat's stderr %q, want Permission denied", stderr)
	}
}

// Nor can it open /proc/$PPID/mem, or read arca's stack, where the
// environment arca was started with lies, through its maps.
func TestRunChildCannotReadArcaMemory(t *testing.T) {
	h := newArcaHome(t)
	const script = `if (exec 3</proc/$PPID/mem) 2>/dev/null; then echo mem-opened; else echo mem-refused; fi
set -- $(awk '$6 == "[stack]" { split($1, a, "-"); print a[1], a[2] }' /proc/$PPID/maps 2>/dev/null)
if [ $# -eq 2 ]; then
	dd if=/proc/$PPID/mem bs=4096 skip=$((0x$1 / 4096)) count=$(((0x$2 - 0x$1) / 4096)) 2>/dev/null
fi
exit 0`
	out, st, stderr := h.runUnprivileged(t, "run", "--", "sh", "-c", script)
	if st != 0 {
		t.Fatalf("arca run: exit %d, stderr %q", st, stderr)
	}
	if bytes.Contains(out, []byte(canaryMark)) {
		t.Errorf("the child read arca's environment from its memory (%d bytes)", len(out))
	}
	if !bytes.Equal(out, []byte("mem-refused\n")) {
		t.Errorf("the child could open /proc/$PPID/mem or its maps (%d bytes, starting %q)", len(out), out[:min(len(out), 40)])
	}
}

// serve's PDP, a child too, reads neither serve's environment nor its
// memory, and inherits none of its descriptors.
func TestServePDPCannotReadArca(t *testing.T) {
	h := newArcaHome(t)
	const pdp = `if cat /proc/$PPID/environ >environ.out 2>/dev/null; then echo read; else echo refused; fi >environ.verdict; ` +
		`if (exec 3</proc/$PPID/mem) 2>/dev/null; then echo read; else echo refused; fi >mem.verdict; ` +
		`ls -l /proc/self/fd >fds.out; echo '{"allow":true}'`
	conf := filepath.Join(h.dir, "serve.toml")
	if err := os.WriteFile(conf, []byte("[serve.pdp]\nexec = '''"+pdp+"'''\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	canary := h.openCanaryFiles(t)
	cmd := exec.Command("nocaps", "arca", "serve", "--config", conf)
	cmd.Env, cmd.Dir = append(append([]string(nil), h.env...), canaryEnv...), h.dir
	cmd.Stdin = strings.NewReader(`{"id":1,"op":"list"}` + "\n")
	cmd.ExtraFiles = canary
	out, err := cmd.Output()
	if err != nil || !bytes.Contains(out, []byte(`"ok":true`)) {
		t.Fatalf("arca serve: %v, stdout %q", err, out)
	}
	for file, want := range map[string]string{"environ.verdict": "refused\n", "mem.verdict": "refused\n"} {
		if got := h.readFile(t, file); got != want {
			t.Errorf("the PDP's %s is %q, want %q", file, got, want)
		}
	}
	if got := h.readFile(t, "environ.out"); strings.Contains(got, canaryMark) {
		t.Errorf("the PDP read serve's environment: %q", got)
	}
	if got := h.readFile(t, "fds.out"); strings.Contains(got, canaryFile) {
		t.Errorf("the PDP inherited a descriptor serve inherited:\n%s", got)
	}
}

// canaryFile names the file of the descriptors arca inherits.
const canaryFile = "inherited-fd-canary"

// openCanaryFiles opens canaryFile five times, as a parent that leaks
// descriptors would hand them to arca: its fds 3 to 7, not close-on-exec.
func (h *arcaHome) openCanaryFiles(t *testing.T) []*os.File {
	t.Helper()
	var files []*os.File
	for range 5 {
		f, err := os.OpenFile(filepath.Join(h.dir, canaryFile), os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		files = append(files, f)
	}
	return files
}

func (h *arcaHome) readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(h.dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A descriptor arca inherited above stderr does not reach the command of
// arca run: arca has it as fds 3 to 7, the command has none of them.
func TestRunChildInheritsNoDescriptor(t *testing.T) {
	h := newArcaHome(t)
	cmd := exec.Command("arca", "run", "--", "sh", "-c", "ls -l /proc/self/fd; for n in 3 4 5 6 7; do [ -e /proc/self/fd/$n ] && echo open $n; done; exit 0")
	cmd.Env, cmd.Dir = h.env, h.dir
	cmd.ExtraFiles = h.openCanaryFiles(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("arca run: %v, stderr %q", err, stderr.String())
	}
	if strings.Contains(string(out), canaryFile) || strings.Contains(string(out), "open ") {
		t.Errorf("the child inherited a descriptor of arca's parent:\n%s", out)
	}
	if !strings.Contains(string(out), "/proc/") {
		t.Errorf("ls -l /proc/self/fd printed no descriptor of its own:\n%s", out)
	}
}

// arca's core limit is 0, soft and hard, however high its parent left it;
// the command of arca run inherits that limit and cannot raise it.
func TestRunCoreLimitIsZero(t *testing.T) {
	h := newArcaHome(t)
	const child = `grep '^Max core file size' /proc/$PPID/limits; echo "child $(ulimit -c) $(ulimit -H -c)"`
	out := string(h.run(t, nil, "sh", "-c", `ulimit -S -c "$(ulimit -H -c)" && exec arca run -- sh -c "$1"`, "sh", child))
	fields := strings.Fields(out)
	if len(fields) != 10 || fields[4] != "0" || fields[5] != "0" || strings.Join(fields[7:], " ") != "child 0 0" {
		t.Errorf("core limits of arca and its child:\n%s\nwant 0 and 0 for both", out)
	}
}
