package client

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The embedding example (examples/embed, shown in docs/embedding.md) runs a
// command with three secrets in its environment: it exits 0 when the
// command finds the values it expects, and fails when one is wrong or a
// ref is missing, without printing a value. It pins the user config, so an
// arca.toml where it runs is never read.
func TestEmbedExample(t *testing.T) {
	o := home(t, "")
	bin := filepath.Join(t.TempDir(), "embed")
	if out, err := exec.Command("go", "build", "-o", bin, "./examples/embed").CombinedOutput(); err != nil {
		t.Fatalf("build the example: %v\n%s", err, out)
	}
	// arca on PATH, as the example finds it.
	path := filepath.Dir(arcaBin) + string(os.PathListSeparator) + os.Getenv("PATH")
	env := []string{"HOME=" + o.Dir, "PATH=" + path}
	// The config it pins, and beside it, where it runs, an arca.toml whose
	// PDP denies everything: serve must not read it.
	userConfig := filepath.Join(o.Dir, ".config", "arca", "arca.toml")
	if err := os.WriteFile(userConfig, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cwd := t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "arca.toml"), []byte(denyAll), 0o600); err != nil {
		t.Fatal(err)
	}
	secrets := map[string]string{"arca://app/db": "db-canary-1", "arca://app/api": "api canary 2", "arca://app/token": "tok=3"}
	for ref, v := range secrets {
		put := exec.Command(arcaBin, "put", ref)
		put.Env, put.Stdin = env, strings.NewReader(v)
		if out, err := put.CombinedOutput(); err != nil {
			t.Fatalf("arca put %s: %v: %s", ref, err, out)
		}
	}
	run := func(check string) (string, error) {
		cmd := exec.Command(bin, "sh", "-c", check)
		cmd.Env, cmd.Dir = env, cwd
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run(`[ "$DB_PASSWORD" = db-canary-1 ] && [ "$API_KEY" = "api canary 2" ] && [ "$TOKEN" = tok=3 ]`); err != nil {
		t.Fatalf("the example with the right values: %v: %s", err, out)
	}
	out, err := run(`[ "$TOKEN" = wrong ]`)
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("the example with a wrong value: %v: %s", err, out)
	}
	rm := exec.Command(arcaBin, "rm", "arca://app/api")
	rm.Env = env
	if b, err := rm.CombinedOutput(); err != nil {
		t.Fatalf("arca rm: %v: %s", err, b)
	}
	out, err = run("true")
	if err == nil || !strings.Contains(out, "not_found") {
		t.Fatalf("the example with a ref missing: %v: %s", err, out)
	}
	// Without the config it pins, it stops: a pinned file must exist.
	if err := os.Remove(userConfig); err != nil {
		t.Fatal(err)
	}
	if out, err := run("true"); err == nil || !strings.Contains(out, "does not exist") {
		t.Fatalf("the example without its config: %v: %s", err, out)
	}
	for _, v := range secrets {
		if strings.Contains(out, v) {
			t.Fatalf("the example printed a value: %s", out)
		}
	}
}

// denyAll is a config whose PDP denies every request.
const denyAll = "[serve.pdp]\nexec = \"echo '{\\\"allow\\\": false}'\"\n"

// The scrub example (examples/scrub, shown in docs/embedding.md) runs a
// tool with a secret in its environment; the tool prints it, raw and in
// base64, on stdout and stderr, split across writes, and what reaches the
// example's stdout holds the placeholder, never the value (of the base64,
// the "g==" the value does not alone determine stays).
func TestScrubExample(t *testing.T) {
	o := home(t, "")
	bin := filepath.Join(t.TempDir(), "scrub")
	if out, err := exec.Command("go", "build", "-o", bin, "./examples/scrub").CombinedOutput(); err != nil {
		t.Fatalf("build the example: %v\n%s", err, out)
	}
	path := filepath.Dir(arcaBin) + string(os.PathListSeparator) + os.Getenv("PATH")
	env := []string{"HOME=" + o.Dir, "PATH=" + path}
	if err := os.WriteFile(filepath.Join(o.Dir, ".config", "arca", "arca.toml"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	const value = "tok-canary-5e6f7a8b"
	put := exec.Command(arcaBin, "put", "arca://app/token")
	put.Env, put.Stdin = env, strings.NewReader(value)
	if out, err := put.CombinedOutput(); err != nil {
		t.Fatalf("arca put: %v: %s", err, out)
	}
	tool := `printf 'connect token=%s' "$TOKEN"; printf ' ok\n'; printf 'auth %s\n' "$(printf %s "$TOKEN" | base64)" >&2; printf 'half %.6s' "$TOKEN"; printf '%s done\n' "${TOKEN#??????}"`
	cmd := exec.Command(bin, "sh", "-c", tool)
	cmd.Env = env
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the example: %v: %s", err, stderr.String())
	}
	want := "connect token=<redacted:app/token> ok\nauth <redacted:app/token>g==\nhalf <redacted:app/token> done\n"
	if stdout.String() != want {
		t.Errorf("the example wrote %q, want %q", stdout.String(), want)
	}
	if strings.Contains(stdout.String()+stderr.String(), value[4:]) {
		t.Errorf("the example passed the value on")
	}
}
