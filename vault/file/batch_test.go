package file

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/arca-secrets/arca/vault"
)

func batchOf(kind vault.Kind, from, to int) vault.Writes {
	var ws vault.Writes
	for i := from; i < to; i++ {
		name := fmt.Sprintf("bulk/rec-%05d", i)
		ws = append(ws, vault.Write{Kind: kind, Name: name, Value: vault.NewSecret([]byte("v-" + name))})
	}
	return ws
}

// A batch is one rewrite of the file and one directory sync, however many
// writes it holds. A large one is approved in runs of approveRun, in
// order, and leaves the handle to reread the file; a small one updates
// what the handle holds in place. Either way the handle then reads what
// the file says.
func TestBatchIsOneRewrite(t *testing.T) {
	path, idPath := newVaultFiles(t)
	var s syncs
	o := defaultOptions()
	o.syncDir = s.syncDir
	f, err := open(path, idPath, nil, o)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx := context.Background()
	if _, err := f.ApplyBatch(ctx, batchOf(vault.Put, 0, 300), func([]vault.Meta) error { return nil }); err != nil {
		t.Fatal(err)
	}
	s.take()
	// Interleaved with what is there: new records between existing ones,
	// overwrites and removals.
	ws := append(batchOf(vault.Put, 250, 2500), batchOf(vault.Remove, 0, 100)...)
	var runs []int
	var names []string
	n, err := f.ApplyBatch(ctx, ws, func(ms []vault.Meta) error {
		runs = append(runs, len(ms))
		for _, m := range ms {
			names = append(names, m.Name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{approveRun, approveRun, len(ws) - 2*approveRun}; n != len(ws) || !slices.Equal(runs, want) {
		t.Fatalf("%d landed, approve runs %v; want %d and %v", n, runs, len(ws), want)
	}
	for i, w := range ws {
		if names[i] != w.Name {
			t.Fatalf("approve saw write %d as %s, want %s: out of order", i, names[i], w.Name)
		}
	}
	if d := s.take(); len(d) != 1 {
		t.Errorf("a batch of %d writes synced the directory %d times, want once", len(ws), len(d))
	}
	if !f.stale {
		t.Error("after a batch of thousands of writes the handle kept what it held")
	}
	if metas, err := f.List(ctx); err != nil || len(metas) != 2400 {
		t.Fatalf("List: %d records, %v; want 2400", len(metas), err)
	}
	sameAsFile(t, f, path, idPath)
	// A small batch, kept in place: no reread.
	small := append(batchOf(vault.Put, 2490, 2510), batchOf(vault.Remove, 100, 110)...)
	if n, err := f.ApplyBatch(ctx, small, func([]vault.Meta) error { return nil }); err != nil || n != len(small) {
		t.Fatalf("a small batch: %d landed, %v", n, err)
	}
	if f.stale {
		t.Error("after a batch of 30 writes the handle rereads the file")
	}
	sameAsFile(t, f, path, idPath)
}

// sameAsFile fails unless f holds, indexed, what a fresh handle reads of
// the file at path.
func sameAsFile(t *testing.T, f *Vault, path, idPath string) {
	t.Helper()
	if err := f.index(); err != nil {
		t.Fatal(err)
	}
	fresh, err := Open(path, idPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if err := fresh.index(); err != nil {
		t.Fatal(err)
	}
	// Records compare by slot and sealed record; where a line lies in the
	// lines as read (entry.at) is the handle's own.
	same := func(a, b entry) bool { return a.slot == b.slot && a.blob == b.blob }
	if !slices.EqualFunc(f.cur.entries, fresh.cur.entries, same) {
		t.Fatal("the handle's records after a batch differ from the file's")
	}
	for p, e := range fresh.cur.byPrefix {
		if !same(f.cur.byPrefix[p], e) {
			t.Fatalf("the handle's index after a batch differs from the file's at prefix %x", p)
		}
	}
	if len(f.cur.byPrefix) != len(fresh.cur.byPrefix) {
		t.Fatalf("index sizes %d and %d", len(f.cur.byPrefix), len(fresh.cur.byPrefix))
	}
}

// A batch that would take the file past its limit is refused before it is
// approved, and the file is left as it was.
func TestBatchOverLimitRefused(t *testing.T) {
	path, idPath := newVaultFiles(t)
	before := fileBytes(t, path)
	f, err := openBounded(t, path, idPath, 1<<20, 20_000)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	_, err = f.ApplyBatch(context.Background(), batchOf(vault.Put, 0, 200), func([]vault.Meta) error { calls++; return nil })
	if err == nil || calls != 0 {
		t.Fatalf("batch over the limit: err %v, %d approve calls; want an error and none", err, calls)
	}
	if !bytes.Equal(before, fileBytes(t, path)) {
		t.Error("a refused batch changed the vault file")
	}
}
