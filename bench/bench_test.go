// Package bench measures arca as its users run it: the built binary, over
// real pipes, beside a bare NDJSON echo loop measured in the same run.
package bench

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// binaries builds arca and the echo baseline into a temp dir.
type binaries struct{ arca, echo, home string }

func build(tb testing.TB) binaries {
	tb.Helper()
	dir := tb.TempDir()
	bins := binaries{arca: filepath.Join(dir, "arca"), echo: filepath.Join(dir, "echo"), home: filepath.Join(dir, "home")}
	for pkg, out := range map[string]string{"../cmd/arca": bins.arca, "./echo": bins.echo} {
		cmd := exec.Command("go", "build", "-o", out, pkg)
		if b, err := cmd.CombinedOutput(); err != nil {
			tb.Fatalf("go build %s: %v\n%s", pkg, err, b)
		}
	}
	return bins
}

// env is the environment arca runs with: its own HOME, nothing inherited
// that could point it at a real vault.
func (b binaries) env() []string {
	return []string{"HOME=" + b.home, "PATH=" + os.Getenv("PATH")}
}

// arcaCmd runs one CLI verb with stdin.
func (b binaries) arcaCmd(tb testing.TB, stdin string, args ...string) string {
	tb.Helper()
	cmd := exec.Command(b.arca, args...)
	cmd.Env = b.env()
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("arca %v: %v", args, err)
	}
	return string(out)
}

// proc is a running loop with pipes on both ends.
type proc struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func start(tb testing.TB, env []string, path string, args ...string) *proc {
	tb.Helper()
	cmd := exec.Command(path, args...)
	cmd.Env = env
	cmd.Stderr = io.Discard // the audit wire: consumed, as an embedder would
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	p := &proc{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
	tb.Cleanup(p.stop)
	return p
}

func (p *proc) stop() {
	p.in.Close()
	p.cmd.Wait()
}

// roundTrip sends one line and reads one line.
func (p *proc) roundTrip(tb testing.TB, line string) string {
	if _, err := io.WriteString(p.in, line); err != nil {
		tb.Fatal(err)
	}
	resp, err := p.out.ReadString('\n')
	if err != nil {
		tb.Fatal(err)
	}
	return resp
}

// rss reads a /proc/<pid>/status field in kB (VmRSS, VmHWM).
func rss(tb testing.TB, pid int, field string) int {
	tb.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		tb.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, field+":"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				tb.Fatal(err)
			}
			return n
		}
	}
	tb.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}
