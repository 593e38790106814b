package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/backend"
	"github.com/arca-secrets/arca/vault"
)

// These tests run the real CLI as a process: TestMain put the test binary
// on $PATH as "arca" (see main_test.go). They cover what a transcript
// cannot: signals sent to arca while its child runs, every exit status, and
// tables of hostile values.

// arcaHome is a fresh HOME with an initialised default vault, and the
// environment to run arca in: nothing of the host's but PATH, and the
// variables the Go runtime of a test binary reads (see runtimeEnv).
type arcaHome struct {
	dir string
	env []string
}

func newArcaHome(t *testing.T) *arcaHome {
	t.Helper()
	h := newBareHome(t)
	h.run(t, nil, "arca", "init")
	return h
}

// newBareHome is an arca home where nothing was made yet.
func newBareHome(t *testing.T) *arcaHome {
	t.Helper()
	if _, err := exec.LookPath("arca"); err != nil {
		t.Fatalf("arca is not on PATH: %v", err)
	}
	dir := t.TempDir()
	h := &arcaHome{dir: dir, env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "LANG=C.UTF-8"}}
	h.env = append(h.env, runtimeEnv()...)
	return h
}

// runtimeEnv is what testscript passes on to the commands it runs, and for
// the same reason: "arca" is this test binary, and under go test -cover it
// writes its coverage to $GOCOVERDIR, or warns on stderr that it cannot.
// arca's allowlist keeps both from any child arca runs. GORACE is raceEnv.
func runtimeEnv() []string {
	env := []string{raceEnv()}
	if v := os.Getenv("GOCOVERDIR"); v != "" {
		env = append(env, "GOCOVERDIR="+v)
	}
	return env
}

// raceEnv is GORACE for the arca children of a test: as the test's, with
// no sleep at exit. A binary built with -race sleeps a second as it exits
// (to let late reports in), and the suite runs arca thousands of times; a
// race is still reported while the child runs.
func raceEnv() string {
	return "GORACE=" + strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0")
}

// run runs a command in h and returns its stdout, failing on a non-zero exit.
func (h *arcaHome) run(t *testing.T, stdin []byte, name string, args ...string) []byte {
	t.Helper()
	out, status, stderr := h.status(t, stdin, name, args...)
	if status != 0 {
		t.Fatalf("%s %q: exit %d, stderr %q", name, args, status, stderr)
	}
	return out
}

// status runs a command in h and returns its stdout, exit status and stderr.
func (h *arcaHome) status(t *testing.T, stdin []byte, name string, args ...string) ([]byte, int, string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env, cmd.Dir = h.env, h.dir
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return out.Bytes(), ee.ExitCode(), errb.String()
	case err != nil:
		t.Fatalf("%s %q: %v", name, args, err)
	}
	return out.Bytes(), 0, errb.String()
}

func (h *arcaHome) put(t *testing.T, ref string, value []byte) {
	t.Helper()
	h.run(t, value, "arca", "put", ref)
}

// Every exit status a child can have comes back as arca's.
func TestRunExitStatusPassThrough(t *testing.T) {
	h := newArcaHome(t)
	for n := 0; n <= 255; n++ {
		_, got, stderr := h.status(t, nil, "arca", "run", "--", "sh", "-c", fmt.Sprintf("exit %d", n))
		if got != n || stderr != "" {
			t.Errorf("child exit %d: arca exited %d, stderr %q", n, got, stderr)
		}
	}
}

// A child killed by a signal makes arca exit 128+N, as a shell reports it.
func TestRunChildKilledBySignal(t *testing.T) {
	h := newArcaHome(t)
	for sig, want := range map[string]int{"KILL": 137, "TERM": 143, "USR1": 138, "INT": 130} {
		_, got, stderr := h.status(t, nil, "arca", "run", "--", "sh", "-c", "kill -s "+sig+" $$")
		if got != want || stderr != "" {
			t.Errorf("child killed by SIG%s: arca exited %d (stderr %q), want %d", sig, got, stderr, want)
		}
	}
}

// startArcaRun starts `arca run ARGS` and waits until the child printed
// "ready". Signals are then sent to arca alone, never to the child.
func startArcaRun(t *testing.T, h *arcaHome, args ...string) (*exec.Cmd, *bufio.Reader) {
	t.Helper()
	cmd := exec.Command("arca", append([]string{"run"}, args...)...)
	cmd.Env, cmd.Dir = h.env, h.dir
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	r := bufio.NewReader(out)
	line, err := r.ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("child said %q, %v; want ready", line, err)
	}
	return cmd, r
}

// waitStatus waits for cmd at most 10 s and returns its exit status.
func waitStatus(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
		if ws.Signaled() {
			t.Fatalf("arca itself was killed by %v", ws.Signal())
		}
		return ws.ExitStatus()
	case <-time.After(10 * time.Second):
		t.Fatal("arca did not exit within 10 s")
		return -1
	}
}

// SIGINT, SIGTERM and SIGHUP sent to arca reach the child, whose handler
// decides arca's exit status, whether the child has arca's stdout
// (--no-mask) or a pipe through a scrub stream (a value injected).
func TestRunForwardsSignals(t *testing.T) {
	h := newArcaHome(t)
	h.put(t, "arca://app/k", []byte("k-CANARY-signals"))
	// The child traps each signal with its own status. sleep runs in the
	// background so that the shell's wait is interrupted by the trap.
	const child = `trap 'kill $! 2>/dev/null; exit 40' INT
trap 'kill $! 2>/dev/null; exit 41' TERM
trap 'kill $! 2>/dev/null; exit 42' HUP
sleep 30 >/dev/null 2>&1 &
echo ready
wait`
	for sig, want := range map[syscall.Signal]int{syscall.SIGINT: 40, syscall.SIGTERM: 41, syscall.SIGHUP: 42} {
		for _, mask := range []bool{false, true} {
			args := []string{"--no-mask", "--", "sh", "-c", child}
			if mask {
				args = []string{"--secret", "K=arca://app/k", "--", "sh", "-c", child}
			}
			cmd, _ := startArcaRun(t, h, args...)
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if got := waitStatus(t, cmd); got != want {
				t.Errorf("%v (mask %v): arca exited %d, want the child's %d", sig, mask, got, want)
			}
		}
	}
}

// A child that does not handle the forwarded signal dies of it: 128+N.
func TestRunForwardedSignalKillsChild(t *testing.T) {
	h := newArcaHome(t)
	cmd, _ := startArcaRun(t, h, "--", "sh", "-c", "echo ready; exec sleep 30")
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if got := waitStatus(t, cmd); got != 128+int(syscall.SIGTERM) {
		t.Fatalf("arca exited %d, want %d", got, 128+int(syscall.SIGTERM))
	}
}

// hostile are values that break naive quoting, and one that is long.
var hostile = [][]byte{
	[]byte("it's"),
	[]byte(`''"'"`),
	[]byte(`'\''`),
	[]byte(`say "hi"`),
	[]byte("$(touch pwned-subst)"),
	[]byte("`touch pwned-tick`"),
	[]byte("'; touch pwned-break; '"),
	[]byte("'; rm -rf keep; '"),
	[]byte(`"; touch pwned-dq; "`),
	[]byte("$HOME ${HOME} $1 $$ ${X:-y}"),
	[]byte(`a\b\\c\n\t\'`),
	[]byte(`ends in \`),
	[]byte("line1\nline2\n\nline4"),
	[]byte("value\n"),
	[]byte("\n\n"),
	[]byte("windows\r\nline\r\n"),
	[]byte("a\rb"),
	[]byte("a\tb\t"),
	[]byte("zwölf ✓ 秘密 🔑"),
	[]byte("  padded  "),
	[]byte("#x # y"),
	[]byte("-n"),
	[]byte("* ? [a-z]"),
	[]byte("bell\x07 esc\x1b[31m del\x7f"),
	bytes.Repeat([]byte(`'"$(x)`+"`\\\n"), 6000),
}

// putAll stores values as arca://t/x0, arca://t/x1, … in h's default
// vault, in process: one vault open for the whole table.
func (h *arcaHome) putAll(t *testing.T, values [][]byte) {
	t.Helper()
	getenv := func(k string) string {
		if k == "HOME" {
			return h.dir
		}
		return ""
	}
	cfg, err := ops.LoadConfig("", getenv)
	if err != nil {
		t.Fatal(err)
	}
	svc := ops.New(ops.Options{Config: cfg, Backends: backend.Kinds{}, Audit: audit.NewWriter(io.Discard, audit.SourceCLI, time.Now)})
	defer svc.Close()
	for i, v := range values {
		if _, err := svc.Put(context.Background(), ops.Request{Ref: fmt.Sprintf("arca://t/x%d", i), Value: vault.NewSecret(v)}); err != nil {
			t.Fatalf("put value %d: %v", i, err)
		}
	}
}

// Every hostile value, through `eval "$(arca env)"` in sh, comes back byte
// for byte, exported, and runs nothing; through arca run it reaches the
// child as is.
func TestEnvEvalHostileValues(t *testing.T) {
	h := newArcaHome(t)
	if err := os.Mkdir(filepath.Join(h.dir, "keep"), 0o700); err != nil {
		t.Fatal(err)
	}
	h.putAll(t, hostile)
	var flags, names []string
	for i := range hostile {
		names = append(names, fmt.Sprintf("V%d", i))
		flags = append(flags, "--secret", fmt.Sprintf("V%d=arca://t/x%d", i, i))
	}
	// Each value as the shell sees it (printf %s "$V"), then as a command
	// it runs sees it (printenv: exported), NUL-separated.
	script := `eval "$(arca env --format sh "$@")" || exit 99` + "\n" + shPrintAll(names)
	out := h.run(t, nil, "sh", append([]string{"-c", script, "sh"}, flags...)...)
	h.checkAll(t, "eval", out)
	// arca run --no-mask: the child gets each value as is.
	out = h.run(t, nil, "arca", append(append([]string{"run", "--no-mask"}, flags...), "--", "sh", "-c", shPrintAll(names))...)
	h.checkAll(t, "run", out)

	ents, err := os.ReadDir(h.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "pwned") {
			t.Errorf("a value ran a command: %s exists", e.Name())
		}
	}
	if _, err := os.Stat(filepath.Join(h.dir, "keep")); err != nil {
		t.Errorf("a value ran rm: %v", err)
	}
}

// shPrintAll is sh that prints each named variable twice, as the shell has
// it and as a child sees it, each followed by a NUL.
func shPrintAll(names []string) string {
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "printf '%%s\\0' \"$%s\"; printenv %s; printf '\\0'\n", n, n)
	}
	return b.String()
}

// checkAll compares the output of shPrintAll with the hostile values.
func (h *arcaHome) checkAll(t *testing.T, how string, out []byte) {
	t.Helper()
	fields := bytes.Split(out, []byte{0})
	if len(fields) != 2*len(hostile)+1 {
		t.Fatalf("%s: %d fields, want %d", how, len(fields), 2*len(hostile)+1)
	}
	for i, v := range hostile {
		if got := fields[2*i]; !bytes.Equal(got, v) {
			t.Errorf("%s: value %d in the shell is %q, want %q", how, i, got, v)
		}
		if got, want := fields[2*i+1], append(v[:len(v):len(v)], '\n'); !bytes.Equal(got, want) {
			t.Errorf("%s: value %d as exported is %q, want %q", how, i, got, want)
		}
	}
}

// The parent's environment does not reach the child: only the allowlist,
// the refs resolved in place and the --secret variables do.
func TestRunScrubsTheEnvironment(t *testing.T) {
	h := newArcaHome(t)
	h.put(t, "arca://app/db", []byte("db-value"))
	h.env = append(h.env,
		"ARCA_SOMETHING_CANARY=canary-arca",
		"ARCA_IDENTITY_CANARY=canary-arca-2",
		"AWS_ACCESS_KEY_ID=canary-aws-id",
		"AWS_SECRET_ACCESS_KEY=canary-aws",
		"AWS_SESSION_TOKEN=canary-aws-session",
		"CLOUDFLARE_API_TOKEN=canary-cf",
		"GITHUB_TOKEN=canary-gh",
		"GOOGLE_APPLICATION_CREDENTIALS=canary-gcp",
		"SSH_AUTH_SOCK=canary-ssh",
		"RANDOM_PARENT_VAR_7d1=canary-random",
		"XDG_CONFIG_HOME=canary-xdg",
		"LC_ALL=C.UTF-8", "LC_TIME=C", "TZ=UTC", "TERM=dumb", "TMPDIR=/tmp", "USER=u", "LOGNAME=u", "SHELL=/bin/sh",
		"lc_lower=canary-case", "PATHX=canary-prefix",
		"DB_PASSWORD=arca://app/db",
	)
	out := string(h.run(t, nil, "arca", "run", "--no-mask", "--secret", "TOKEN=arca://app/db", "--", "env"))
	if strings.Contains(out, "canary") {
		t.Errorf("a parent variable reached the child:\n%s", out)
	}
	var names []string
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		name, _, _ := strings.Cut(l, "=")
		names = append(names, name)
	}
	want := []string{"PATH", "HOME", "LANG", "LC_ALL", "LC_TIME", "TZ", "TERM", "TMPDIR", "USER", "LOGNAME", "SHELL", "DB_PASSWORD", "TOKEN"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("the child's variables are %q, want %q", names, want)
	}
	for _, kv := range []string{"PATH=" + os.Getenv("PATH"), "HOME=" + h.dir, "LANG=C.UTF-8", "DB_PASSWORD=db-value", "TOKEN=db-value"} {
		if !strings.Contains(out, kv+"\n") {
			t.Errorf("the child lacks %s", kv)
		}
	}
}

// Masked (the default), a value the child writes in pieces, however they
// fall, is redacted on both streams; the child's exit status still passes
// through.
func TestRunMaskRealChild(t *testing.T) {
	h := newArcaHome(t)
	const value = "s3cr3t-Value"
	h.put(t, "arca://app/k", []byte(value))
	// One write per byte, with pauses so that arca reads them apart.
	var script strings.Builder
	script.WriteString("printf 'out: '; ")
	for i := 0; i < len(value); i++ {
		fmt.Fprintf(&script, "printf %%s '%c'; printf %%s '%c' >&2; sleep 0.01; ", value[i], value[i])
	}
	script.WriteString(`printf ' end\n'; printf '%s' "$K" >&2; exit 7`)
	cmd := exec.Command("arca", "run", "--secret", "K=arca://app/k", "--", "sh", "-c", script.String())
	cmd.Env, cmd.Dir = h.env, h.dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Fatalf("arca run: %v, want exit 7", err)
	}
	if got, want := out.String(), "out: <redacted:K> end\n"; got != want {
		t.Errorf("stdout %q, want %q", got, want)
	}
	// The value twice, touching: one placeholder.
	if got, want := errb.String(), "<redacted:K>"; got != want {
		t.Errorf("stderr %q, want %q", got, want)
	}
	// Large output passes whole, the value redacted wherever it falls.
	cmd = exec.Command("arca", "run", "--secret", "K=arca://app/k", "--", "sh", "-c",
		`i=0; while [ $i -lt 20000 ]; do printf 'line %d %s\n' $i "$K"; i=$((i+1)); done`)
	cmd.Env, cmd.Dir = h.env, h.dir
	big, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(big, []byte(value)) || bytes.Count(big, []byte("<redacted:K>\n")) != 20000 {
		t.Errorf("large output: value present or redactions missing (%d bytes)", len(big))
	}
}
