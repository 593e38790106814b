package inject

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// hostileFile is a value that only a file can hold: NUL, newlines, quotes,
// template braces, no trailing newline.
const hostileFile = "-----BEGIN KEY-----\nline 'one' \"two\" {{.x}} $HOME\x00\r\n\n-----END KEY-----"

func TestWriteFilesExactBytesAndModes(t *testing.T) {
	tmp := t.TempDir()
	old := syscall.Umask(0o077 | 0o200) // a umask that takes the owner's write bit
	defer syscall.Umask(old)
	getenv := func(k string) string {
		if k == "TMPDIR" {
			return tmp
		}
		return ""
	}
	vars := []Materialized{
		{Name: "A", Value: secret("a")},
		{Name: "KEY", Value: secret(hostileFile), File: true},
		{Name: "P", Value: secret("8443"), Literal: true},
	}
	f, _, err := writeFiles(vars, getenv)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(f.dir); err != nil || fi.Mode().Perm() != 0o700 || !strings.HasPrefix(filepath.Base(f.dir), "arca-run-") {
		t.Fatalf("dir %s: %v, %v; want mode 0700, named arca-run-…", f.dir, fi.Mode(), err)
	}
	p := f.paths["KEY"]
	if p != filepath.Join(f.dir, "KEY") || len(f.paths) != 1 {
		t.Fatalf("paths %q", f.paths)
	}
	if fi, err := os.Lstat(p); err != nil || fi.Mode() != 0o600 {
		t.Fatalf("file %s: %v, %v; want a regular file of mode 0600", p, fi.Mode(), err)
	}
	if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, []byte(hostileFile)) {
		t.Fatalf("file holds %q, %v; want %q", got, err, hostileFile)
	}
	env := f.env(vars)
	if string(env[0].Value.Reveal()) != "a" || string(env[1].Value.Reveal()) != p || env[1].File || string(env[2].Value.Reveal()) != "8443" {
		t.Fatalf("env = %+v", env)
	}
	if err := f.remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(f.dir); !os.IsNotExist(err) {
		t.Fatalf("after remove: %v", err)
	}
}

// No file asked for, no directory made.
func TestWriteFilesNone(t *testing.T) {
	f, warning, err := writeFiles([]Materialized{{Name: "A", Value: secret("a")}}, func(string) string { return "/nonexistent" })
	if f != nil || warning != "" || err != nil || f.remove() != nil || len(f.env(nil)) != 0 {
		t.Fatalf("writeFiles = %v, %q, %v", f, warning, err)
	}
}

// A file that exists (a symlink planted there) is never written through.
func TestWriteFileRefusesAnExistingPath(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	link := filepath.Join(dir, "KEY")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(link, secret(canary)); err == nil {
		t.Fatal("wrote through a symlink")
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatalf("the symlink's target was created: %v", err)
	}
}

// No place to make the directory in: op_error, nothing left.
func TestWriteFilesNowhere(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	_, _, err := makeFileDir([]parent{{dir: missing}})
	if err == nil || !strings.Contains(err.Error(), "cannot make a directory for the --file values") {
		t.Fatalf("makeFileDir = %v", err)
	}
}

func TestPrivateDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if !privateDir(dir) {
		t.Errorf("%s (0700, ours) is not private", dir)
	}
	if err := os.Chmod(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	if privateDir(dir) || privateDir(filepath.Join(dir, "missing")) {
		t.Errorf("a 0750 or missing directory is private")
	}
}

// The child reads its file; the file and its directory are gone once Run
// returns, whether the child exited, was killed, or did not start.
func TestRunFileIsRemoved(t *testing.T) {
	tmp := t.TempDir()
	ch := Child{
		Environ: []string{"PATH=" + os.Getenv("PATH")},
		Secrets: []Materialized{{Name: "KEY", Value: secret(hostileFile), File: true}},
		Getenv:  func(k string) string { return map[string]string{"TMPDIR": tmp}[k] },
		NoMask:  true, // the child prints the value, to be compared
	}
	for script, want := range map[string]int{`cat "$KEY"; printf '\n%s' "$KEY" >&2`: 0, `printf '\n%s' "$KEY" >&2; kill -s KILL $$`: 137} {
		var out, errb bytes.Buffer
		ch.Stdout, ch.Stderr = &out, &errb
		cmd, err := Command([]string{"sh", "-c", script})
		if err != nil {
			t.Fatal(err)
		}
		st, err := Run(cmd, ch)
		if err != nil || st != want {
			t.Fatalf("%s: %d, %v; want %d", script, st, err, want)
		}
		if want == 0 && out.String() != hostileFile {
			t.Errorf("the child read %q, want %q", out.String(), hostileFile)
		}
		path := strings.TrimPrefix(errb.String(), "\n")
		if !strings.HasSuffix(path, "/KEY") {
			t.Fatalf("the child's KEY is %q, want a path", path)
		}
		if _, err := os.Stat(filepath.Dir(path)); !os.IsNotExist(err) {
			t.Errorf("%s: the directory is left after the child exited: %v", script, err)
		}
	}
	// A command that cannot start leaves nothing either.
	cmd := exec.Command(filepath.Join(tmp, "not-executable"))
	if err := os.WriteFile(cmd.Path, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(cmd, ch); err == nil {
		t.Fatal("a command that cannot start ran")
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, FileDirPattern)); len(left) != 0 {
		t.Fatalf("left behind: %q", left)
	}
}

// Masked (the default), a file's value is redacted in the child's output.
func TestRunMaskCoversFiles(t *testing.T) {
	cmd, err := Command([]string{"sh", "-c", `cat "$KEY"; echo " $PORT"`})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	st, err := Run(cmd, Child{
		Environ: []string{"PATH=" + os.Getenv("PATH")},
		Secrets: []Materialized{{Name: "KEY", Value: secret(canary), File: true}, {Name: "PORT", Value: secret("8443"), Literal: true}},
		Stdout:  &out, Stderr: &out,
		Getenv: func(k string) string { return map[string]string{"TMPDIR": t.TempDir()}[k] },
	})
	if err != nil || st != 0 || out.String() != "<redacted:KEY> 8443\n" {
		t.Fatalf("%d, %v, output %q", st, err, out.String())
	}
}
