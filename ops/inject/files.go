package inject

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/vault"
)

// FileDirPattern names the directory of a run's --file values, its "*" a
// random string (os.MkdirTemp): a directory left behind by an arca that
// was killed outright is easy to find.
const FileDirPattern = "arca-run-*"

// parent is a directory that a run's file directory may be made in.
type parent struct {
	dir string
	// warning is why the files would not be on a memory-backed (or, on
	// macOS, per-user) filesystem there, or "".
	warning string
}

// secretFiles is the directory of a run's --file values; nil when the run
// has none.
type secretFiles struct {
	dir   string
	paths map[string]string // by variable name
}

// writeFiles writes each File value of vars, exactly, to a file named
// after its variable (mode 0600, created O_EXCL|O_NOFOLLOW) in a fresh
// directory of mode 0700, made in the first of fileParents(getenv) that
// takes it. It returns nil when vars have no File value, and the reason the
// files are not in memory, or "". On failure nothing is left behind.
func writeFiles(vars []Materialized, getenv func(string) string) (*secretFiles, string, error) {
	if !hasFile(vars) {
		return nil, "", nil
	}
	dir, warning, err := makeFileDir(fileParents(getenv))
	if err != nil {
		return nil, "", err
	}
	f := &secretFiles{dir: dir, paths: map[string]string{}}
	for _, v := range vars {
		if !v.File {
			continue
		}
		p := filepath.Join(dir, v.Name)
		if err := writeFile(p, v.Value); err != nil {
			_ = f.remove()
			return nil, "", ops.Errorf(manifest.OpError, "secret %s: cannot write its file in %s: %v", v.Name, dir, err)
		}
		f.paths[v.Name] = p
	}
	return f, warning, nil
}

func hasFile(vars []Materialized) bool {
	for _, v := range vars {
		if v.File {
			return true
		}
	}
	return false
}

// makeFileDir makes a fresh directory of mode 0700 (whatever the umask)
// in the first of parents that takes one.
func makeFileDir(parents []parent) (dir, warning string, err error) {
	for _, p := range parents {
		dir, err = os.MkdirTemp(p.dir, FileDirPattern)
		if err != nil {
			continue
		}
		if err = os.Chmod(dir, 0o700); err != nil {
			_ = os.Remove(dir)
			continue
		}
		if abs, aerr := filepath.Abs(dir); aerr == nil {
			dir = abs // a relative $TMPDIR: the child may change directory
		}
		return dir, p.warning, nil
	}
	return "", "", ops.Errorf(manifest.OpError, "cannot make a directory for the --file values (set $TMPDIR to a directory of yours): %v", err)
}

// writeFile creates the file at path, which must not exist, mode 0600,
// and writes v to it.
func writeFile(path string, v vault.Secret) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	if err := f.Chmod(0o600); err != nil { // the umask may have taken bits
		f.Close()
		return err
	}
	if _, err := f.Write(v.Reveal()); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// env returns vars with each File value replaced by its file's path: the
// variables the child gets.
func (f *secretFiles) env(vars []Materialized) []Materialized {
	if f == nil {
		return vars
	}
	out := make([]Materialized, len(vars))
	for i, v := range vars {
		if v.File {
			v = Materialized{Name: v.Name, Value: vault.NewSecret([]byte(f.paths[v.Name])), Literal: true}
		}
		out[i] = v
	}
	return out
}

// remove removes the directory and all in it.
func (f *secretFiles) remove() error {
	if f == nil {
		return nil
	}
	if err := os.RemoveAll(f.dir); err != nil {
		return fmt.Errorf("cannot remove %s, which holds --file values (remove it by hand): %v", f.dir, err)
	}
	return nil
}

// privateDir reports whether dir is a directory of the effective user's
// alone: owned by them, mode 0700.
func privateDir(dir string) bool {
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}

// tempDir is $TMPDIR, else /tmp, as os.TempDir has it on Unix.
func tempDir(getenv func(string) string) string {
	if d := getenv("TMPDIR"); d != "" {
		return d
	}
	return "/tmp"
}
