package file

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/arca-secrets/arca/vault"
)

func batchOf(kind vault.Kind, from, to int) []vault.Write {
	var ws []vault.Write
	for i := from; i < to; i++ {
		name := fmt.Sprintf("bulk/rec-%05d", i)
		ws = append(ws, vault.Write{Kind: kind, Name: name, Value: vault.NewSecret([]byte("v-" + name))})
	}
	return ws
}

// A batch is one rewrite of the file and one directory sync, however many
// writes it holds; what the handle holds afterwards is what the file says.
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
	ws := append(batchOf(vault.Put, 250, 700), batchOf(vault.Remove, 0, 100)...)
	calls := 0
	ms, err := f.ApplyBatch(ctx, ws, func(ms []vault.Meta) error { calls++; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != len(ws) || calls != 1 {
		t.Fatalf("%d metas, %d approve calls; want %d and 1", len(ms), calls, len(ws))
	}
	if d := s.take(); len(d) != 1 {
		t.Errorf("a batch of %d writes synced the directory %d times, want once", len(ws), len(d))
	}
	fresh, err := Open(path, idPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if err := fresh.index(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.cur.entries, fresh.cur.entries) {
		t.Fatal("the handle's records after a batch differ from the file's")
	}
	for p, e := range fresh.cur.byPrefix {
		if f.cur.byPrefix[p] != e {
			t.Fatalf("the handle's index after a batch differs from the file's at prefix %x", p)
		}
	}
	if len(f.cur.byPrefix) != len(fresh.cur.byPrefix) {
		t.Fatalf("index sizes %d and %d", len(f.cur.byPrefix), len(fresh.cur.byPrefix))
	}
	if metas, err := fresh.List(ctx); err != nil || len(metas) != 600 {
		t.Fatalf("List: %d records, %v; want 600", len(metas), err)
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
