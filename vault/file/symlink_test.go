package file

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/fsio"
	"github.com/arca-secrets/arca/vault/identity"
	"github.com/arca-secrets/arca/vault/internal/seal"
)

// linkedVault is a vault in a "synced" directory of its own and a path
// elsewhere that leads to it through one or more symlinks.
type linkedVault struct {
	link, target, idPath string
	linkTo               string // what the link at link says
}

// newLinkedVault makes the vault at sync/arca.vault and links
// data/default.vault to it; relative makes the link relative, and chain
// puts a second link between them.
func newLinkedVault(t *testing.T, relative, chain bool) linkedVault {
	t.Helper()
	dir := t.TempDir()
	base, err := filepath.EvalSymlinks(dir) // the temp dir may itself be reached by a link
	if err != nil {
		t.Fatal(err)
	}
	target, idPath := filepath.Join(base, "sync", "arca.vault"), filepath.Join(base, "id", "identity.txt")
	if _, _, err := identity.Ensure(idPath, time.Now()); err != nil {
		t.Fatal(err)
	}
	ids, err := identity.Load(idPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Create(target, identity.RecipientsOf(ids)); err != nil {
		t.Fatal(err)
	}
	v := linkedVault{link: filepath.Join(base, "data", "default.vault"), target: target, idPath: idPath}
	if err := os.MkdirAll(filepath.Dir(v.link), 0o700); err != nil {
		t.Fatal(err)
	}
	v.linkTo = target
	if relative {
		v.linkTo = filepath.Join("..", "sync", "arca.vault")
	}
	if chain {
		middle := filepath.Join(base, "data", "middle.vault")
		if err := os.Symlink(v.linkTo, middle); err != nil {
			t.Fatal(err)
		}
		v.linkTo = "middle.vault"
	}
	if err := os.Symlink(v.linkTo, v.link); err != nil {
		t.Fatal(err)
	}
	return v
}

// syncs records the directories a handle syncs.
type syncs struct {
	mu   sync.Mutex
	dirs []string
}

func (s *syncs) syncDir(dir string) error {
	s.mu.Lock()
	s.dirs = append(s.dirs, dir)
	s.mu.Unlock()
	return fsio.SyncDir(dir)
}

func (s *syncs) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.dirs
	s.dirs = nil
	return d
}

// Every write through a vault path that is a symlink goes to the file it
// leads to: the link stays, the file is replaced atomically in its own
// directory (which is synced) as a fresh 0600 file, and nothing is left
// beside the link.
func TestSymlinkedVaultWritesThrough(t *testing.T) {
	for _, tc := range []struct {
		name            string
		relative, chain bool
	}{
		{"absolute link", false, false},
		{"relative link", true, false},
		{"chain of links", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := newLinkedVault(t, tc.relative, tc.chain)
			ids, _ := identity.Load(v.idPath, nil)
			if created, err := Create(v.link, identity.RecipientsOf(ids)); err != nil || created {
				t.Fatalf("init through the link: created %t, %v; want the vault kept", created, err)
			}
			var s syncs
			o := defaultOptions()
			o.syncDir = s.syncDir
			f, err := open(v.link, v.idPath, nil, o)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			ctx := context.Background()
			for _, step := range []struct {
				what string
				do   func() error
			}{
				{"put", func() error {
					_, err := f.Apply(ctx, vault.Write{Kind: vault.Put, Name: "app/db", Value: vault.NewSecret([]byte("one"))}, approveAll)
					return err
				}},
				{"rekey", func() error { _, err := f.Rekey(ctx); return err }},
				{"recipients", func() error {
					rs, err := f.Recipients(ctx)
					if err != nil {
						return err
					}
					prs, err := seal.ParseRecipients(rs)
					if err != nil {
						return err
					}
					return f.SetRecipients(ctx, rs, prs)
				}},
				{"rotate", func() error {
					_, err := f.Apply(ctx, vault.Write{Kind: vault.Rotate, Name: "app/db", Value: vault.NewSecret([]byte("two"))}, approveAll)
					return err
				}},
			} {
				if err := step.do(); err != nil {
					t.Fatalf("%s through the link: %v", step.what, err)
				}
				v.wantThrough(t, step.what, s.take())
			}
			g, err := Open(v.target, v.idPath, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			if r, err := g.Get(ctx, "app/db"); err != nil || string(r.Value.Reveal()) != "two" || r.Version != 2 {
				t.Fatalf("the target after writes through the link: %v, version %d", err, r.Version)
			}
		})
	}
}

func approveAll(vault.Meta) error { return nil }

// wantThrough checks the state after a write through the link.
func (v linkedVault) wantThrough(t *testing.T, what string, synced []string) {
	t.Helper()
	if to, err := os.Readlink(v.link); err != nil || to != v.linkTo {
		t.Fatalf("after %s: the link reads %q, %v; want it kept, leading to %q", what, to, err, v.linkTo)
	}
	fi, err := os.Lstat(v.target)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Fatalf("after %s: the target is %v, %v; want a regular 0600 file", what, fi.Mode(), err)
	}
	if !slices.Contains(synced, filepath.Dir(v.target)) {
		t.Errorf("after %s: synced %q, want the target's directory %s", what, synced, filepath.Dir(v.target))
	}
	for _, p := range []string{v.link + ".lock", v.link + ".tmp", v.target + ".tmp"} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("after %s: %s exists", what, p)
		}
	}
	if _, err := os.Stat(v.target + ".lock"); err != nil {
		t.Errorf("after %s: no lock beside the target: %v", what, err)
	}
}

// A write through the link waits for the lock a writer of the file itself
// holds: both take the lock beside the file.
func TestSymlinkedVaultSharesTheLock(t *testing.T) {
	v := newLinkedVault(t, true, false)
	f, err := Open(v.link, v.idPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	unlock, err := fsio.Lock(v.target + ".lock")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := f.Apply(context.Background(), vault.Write{Kind: vault.Put, Name: "app/db", Value: vault.NewSecret([]byte("v"))}, approveAll)
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("a write through the link did not wait for the target's lock: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	unlock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A vault path that is a symlink leading nowhere is reported as that, by
// init and by every open; nothing is created.
func TestDanglingSymlinkedVault(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "default.vault")
	to := filepath.Join("..", "gone", "arca.vault")
	if err := os.Symlink(to, link); err != nil {
		t.Fatal(err)
	}
	idPath := filepath.Join(dir, "identity.txt")
	if _, _, err := identity.Ensure(idPath, time.Now()); err != nil {
		t.Fatal(err)
	}
	ids, _ := identity.Load(idPath, nil)
	want := "vault path " + link + " is a symlink to " + to + ", which does not exist"
	created, err := Create(link, identity.RecipientsOf(ids))
	if err == nil || !strings.Contains(err.Error(), want) || created {
		t.Errorf("Create through a dangling link: created %t, %v; want %q", created, err, want)
	}
	if _, err := Open(link, idPath, nil); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Open through a dangling link: %v; want %q", err, want)
	}
	if err := CheckPath(link); err == nil || err.Error() != want {
		t.Errorf("CheckPath of a dangling link: %v; want %q", err, want)
	}
	for _, p := range []string{filepath.Join(dir, "nothing.vault"), idPath} {
		if err := CheckPath(p); err != nil {
			t.Errorf("CheckPath(%s): %v", p, err)
		}
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the dangling link after init: %v, %v", fi.Mode(), err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "..", "gone")); err == nil {
		t.Error("init created the link's missing target")
	}
}

// check looks at the modes of the file a linked vault path leads to and of
// that file's directory, where writes make their temp files.
func TestSymlinkedVaultPermissions(t *testing.T) {
	v := newLinkedVault(t, true, false)
	dir := filepath.Dir(v.target)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(v.target, 0o644); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(PermissionProblems(v.link, v.idPath), "\n")
	for _, want := range []string{"vault directory " + dir + " is readable", "vault " + v.link + " is readable by other users (mode 0644)"} {
		if !strings.Contains(got, want) {
			t.Errorf("problems %q, want %q", got, want)
		}
	}
}

// A write holding one file's lock never takes its records from another:
// were the link moved between the lock and the read, refreshAt refuses,
// and the file the lock is for is left as it was.
func TestRefreshAtRefusesAnotherFile(t *testing.T) {
	dir := t.TempDir()
	idPath := filepath.Join(dir, "identity.txt")
	if _, _, err := identity.Ensure(idPath, time.Now()); err != nil {
		t.Fatal(err)
	}
	ids, err := identity.Load(idPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, b, link := filepath.Join(dir, "a.vault"), filepath.Join(dir, "b.vault"), filepath.Join(dir, "link.vault")
	for _, p := range []string{a, b} {
		if _, err := Create(p, identity.RecipientsOf(ids)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(b, link); err != nil {
		t.Fatal(err)
	}
	f, err := Open(link, idPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	before, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	err = f.refreshAt(a) // holds a's lock, but the link leads to b
	f.mu.Unlock()
	if err == nil || !strings.Contains(err.Error(), "changed where it leads") {
		t.Fatalf("refreshAt another file: %v", err)
	}
	if after, _ := os.ReadFile(a); string(after) != string(before) {
		t.Fatal("the locked file changed")
	}
	f.mu.Lock()
	err = f.refreshAt(b)
	f.mu.Unlock()
	if err != nil {
		t.Fatalf("refreshAt the file the link leads to: %v", err)
	}
}
