package serve

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The tests in this file and its neighbours that need `arca serve` as its
// users run it — the built binary, its own process, real pipes and real
// signals — build cmd/arca into a temp dir and run it with a fresh HOME.

// arcaBin is the built arca binary and the HOME it runs with.
type arcaBin struct{ path, home string }

// buildArca builds cmd/arca and runs `arca init` in a fresh HOME.
func buildArca(t *testing.T) arcaBin {
	t.Helper()
	dir := t.TempDir()
	b := arcaBin{path: filepath.Join(dir, "arca"), home: filepath.Join(dir, "home")}
	if out, err := exec.Command("go", "build", "-o", b.path, "../cmd/arca").CombinedOutput(); err != nil {
		t.Fatalf("go build ../cmd/arca: %v\n%s", err, out)
	}
	if err := os.Mkdir(b.home, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := b.command("init").CombinedOutput(); err != nil {
		t.Fatalf("arca init: %v\n%s", err, out)
	}
	return b
}

// command is arca with args, its environment only HOME and PATH.
func (b arcaBin) command(args ...string) *exec.Cmd {
	cmd := exec.Command(b.path, args...)
	cmd.Env = []string{"HOME=" + b.home, "PATH=" + os.Getenv("PATH"), "LANG=C"}
	cmd.Dir = b.home
	return cmd
}

// writeConfig writes toml as dir/arca.toml and returns its path.
func writeConfig(t *testing.T, dir, toml string) string {
	t.Helper()
	p := filepath.Join(dir, "arca.toml")
	if err := os.WriteFile(p, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// serve runs one `arca serve` session over stdin and returns what it wrote
// and how it exited.
func (b arcaBin) serve(t *testing.T, stdin string, args ...string) (stdout, stderr []byte, err error) {
	t.Helper()
	cmd := b.command(append([]string{"serve"}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.Bytes(), errb.Bytes(), err
}

// needTool returns the path of an outside program a test reads serve's
// output with, or skips the test when this machine has none.
func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s is not installed: %v", name, err)
	}
	return p
}
