package file

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/vault"
)

func allow(vault.Meta) error { return nil }

func put(name, value string) vault.Write {
	return vault.Write{Kind: vault.Put, Name: name, Value: vault.NewSecret([]byte(value))}
}

// groupOf adds ws to a new group of f, failing the test on any error.
func groupOf(t *testing.T, f *Vault, ws ...vault.Write) vault.Group {
	t.Helper()
	g, err := f.Group(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		if _, err := g.Add(context.Background(), w, allow); err != nil {
			t.Fatalf("Add %s: %v", w.Name, err)
		}
	}
	return g
}

// A group is one rewrite: one temp file synced, one rename, one directory
// sync, however many writes it holds; and the size it worked out as each
// write was added is the size of the file it wrote.
func TestGroupIsOneRewrite(t *testing.T) {
	path, idPath := newVaultFiles(t)
	var renames, fileSyncs int
	var s syncs
	o := defaultOptions()
	o.syncDir = s.syncDir
	o.rename = func(from, to string) error { renames++; return os.Rename(from, to) }
	o.syncFile = func(fh *os.File) error { fileSyncs++; return fh.Sync() }
	f, err := open(path, idPath, nil, o)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.ApplyBatch(context.Background(), batchOf(vault.Put, 0, 20), func([]vault.Meta) error { return nil }); err != nil {
		t.Fatal(err)
	}
	renames, fileSyncs, _ = 0, 0, s.take()
	var ws []vault.Write
	for i := range 100 {
		ws = append(ws, put(fmt.Sprintf("app/k%03d", i%70), fmt.Sprintf("value %d, some bytes to vary the size %s", i, bytes.Repeat([]byte("x"), i))))
	}
	ws = append(ws, vault.Write{Kind: vault.Remove, Name: "bulk/rec-00003"})
	g := groupOf(t, f, ws...).(*group)
	want := g.size(g.body, g.lines)
	if err := g.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if renames != 1 || fileSyncs != 1 || len(s.take()) != 1 {
		t.Errorf("a group of %d writes: %d renames, %d file syncs; want one of each and one directory sync", len(ws), renames, fileSyncs)
	}
	if got := int64(len(fileBytes(t, path))); got != want {
		t.Errorf("the group worked out a file of %d bytes and wrote %d", want, got)
	}
	again, err := Open(path, idPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if ms, err := again.List(context.Background()); err != nil || len(ms) != 20-1+70 {
		t.Fatalf("after the group: %d records (%v), want %d", len(ms), err, 20-1+70)
	}
	r, err := again.Get(context.Background(), "app/k005")
	if err != nil || r.Version != 2 || !bytes.HasPrefix(r.Value.Reveal(), []byte("value 75,")) {
		t.Errorf("app/k005 after two puts in one group: version %d (%v), want the second put's value at version 2", r.Version, err)
	}
}

// A commit that fails, writing or syncing the temp file or renaming it,
// changes nothing: the file is as it was, no temp file is left, the
// handle still reads what is stored, and the next group commits.
func TestGroupCommitFailure(t *testing.T) {
	broken := errors.New("injected failure")
	for _, step := range []string{"sync", "rename"} {
		t.Run(step, func(t *testing.T) {
			path, idPath := newVaultFiles(t)
			failing := false
			o := defaultOptions()
			o.syncFile = func(fh *os.File) error {
				if failing && step == "sync" {
					return broken
				}
				return fh.Sync()
			}
			o.rename = func(from, to string) error {
				if failing && step == "rename" {
					return broken
				}
				return os.Rename(from, to)
			}
			f, err := open(path, idPath, nil, o)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			groupOf(t, f, put("app/kept", "old")).Commit(context.Background())
			before := fileBytes(t, path)
			failing = true
			g := groupOf(t, f, put("app/kept", "new"), put("app/added", "x"))
			if err := g.Commit(context.Background()); !errors.Is(err, broken) {
				t.Fatalf("Commit: %v, want the injected failure", err)
			}
			if !bytes.Equal(fileBytes(t, path), before) {
				t.Error("a failed commit changed the vault file")
			}
			if _, err := os.Stat(path + ".tmp"); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a failed commit left its temp file: %v", err)
			}
			if r, err := f.Get(context.Background(), "app/kept"); err != nil || r.Version != 1 || string(r.Value.Reveal()) != "old" {
				t.Errorf("after a failed commit the handle reads version %d (%v), want the stored version 1", r.Version, err)
			}
			if _, err := f.Get(context.Background(), "app/added"); !errors.Is(err, vault.ErrNotFound) {
				t.Errorf("a record of the failed group: %v, want not found", err)
			}
			failing = false
			if err := groupOf(t, f, put("app/kept", "newer")).Commit(context.Background()); err != nil {
				t.Fatalf("the group after a failed one: %v", err)
			}
			if r, _ := f.Get(context.Background(), "app/kept"); r.Version != 2 {
				t.Errorf("after the next group: version %d, want 2", r.Version)
			}
		})
	}
}

// A write that would take the file past its bound is refused alone,
// before approve; the writes before and after it land.
func TestGroupBound(t *testing.T) {
	path, idPath := newVaultFiles(t)
	size := int64(len(fileBytes(t, path)))
	f, err := openBounded(t, path, idPath, 1<<20, size+1500)
	if err != nil {
		t.Fatal(err)
	}
	g := groupOf(t, f, put("app/small", "s"))
	approved := false
	_, err = g.Add(context.Background(), put("app/big", string(bytes.Repeat([]byte("b"), 2000))), func(vault.Meta) error { approved = true; return nil })
	if err == nil || approved {
		t.Fatalf("a write past the bound: %v, approved %t; want refused unapproved", err, approved)
	}
	if _, err := g.Add(context.Background(), put("app/after", "a"), allow); err != nil {
		t.Fatalf("a write after the refused one: %v", err)
	}
	if err := g.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	ms, err := f.List(context.Background())
	if err != nil || len(ms) != 2 || ms[0].Name != "app/after" || ms[1].Name != "app/small" {
		t.Fatalf("after the group: %v (%v), want app/after and app/small", ms, err)
	}
}

// A vault already over its bound may shrink but not grow back, in a group
// as alone: the bound of each write is the file as the group's earlier
// writes leave it, not as it was when the group began.
func TestGroupBoundFollowsEarlierWrites(t *testing.T) {
	path, idPath := newVaultFiles(t)
	big, err := openBounded(t, path, idPath, 1<<20, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if err := groupOf(t, big, put("app/big", strings.Repeat("b", 3000)), put("app/other", strings.Repeat("o", 3000))).Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	big.Close()
	size := int64(len(fileBytes(t, path)))
	f, err := openBounded(t, path, idPath, 1<<20, size-5000) // over it even after the rm
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g := groupOf(t, f, vault.Write{Kind: vault.Remove, Name: "app/big"})
	approved := false
	if _, err := g.Add(context.Background(), put("app/grow", strings.Repeat("g", 2000)), func(vault.Meta) error { approved = true; return nil }); err == nil || approved || !strings.Contains(err.Error(), "would grow over its limit") {
		g.Abort() // the group holds the handle: end it before Close runs
		t.Fatalf("a put that grows the vault back after an rm, in a group: %v, approved %t; want refused unapproved", err, approved)
	}
	if err := g.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := int64(len(fileBytes(t, path))); got >= size {
		t.Errorf("the vault after the rm: %d bytes, want under %d", got, size)
	}
}
