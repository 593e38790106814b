package file

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/arca-secrets/arca/vault"
)

// vaultOf opens a vault of n records (batchOf's names) through a fresh
// handle, indexed as a handle is after its first write.
func vaultOf(t *testing.T, n int) *Vault {
	t.Helper()
	path, idPath := newVaultFiles(t)
	f, err := Open(path, idPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.ApplyBatch(context.Background(), batchOf(vault.Put, 0, n), func([]vault.Meta) error { return nil }); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if f, err = Open(path, idPath, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if _, err := f.Apply(context.Background(), put("warm/up", "v"), allow); err != nil {
		t.Fatal(err)
	}
	return f
}

// A put compares the slot it writes with the records in place, allocating
// nothing per record: its allocations are the same in a vault of 20
// records and of 2,000.
func TestPutAllocationsDoNotGrow(t *testing.T) {
	ctx := context.Background()
	allocs := func(n int) float64 {
		f := vaultOf(t, n)
		value := vault.NewSecret([]byte("a value"))
		i := 0
		return testing.AllocsPerRun(20, func() {
			// A record in the middle of the vault, so the records before
			// it are passed over on the way to it.
			w := vault.Write{Kind: vault.Put, Name: fmt.Sprintf("bulk/rec-%05d", n/2+i%2), Value: value}
			if _, err := f.Apply(ctx, w, allow); err != nil {
				t.Fatal(err)
			}
			i++
		})
	}
	small, large := allocs(20), allocs(2_000)
	// Some slack: under the race detector sync.Pool drops what it is
	// given at random, so a few allocations come and go from run to run.
	// Before the one pass, a put at 2,000 records allocated some 1,300
	// times against 74 at 20.
	if large > small+small/4 {
		t.Errorf("a put allocates %.0f times in a vault of 20 records and %.0f in one of 2,000; want no more for more records", small, large)
	}
}

// A write passes the records no write names on as the file holds them, in
// spans of the lines as read, around the lines written since: the file it
// makes is the one writing every line anew makes, byte for byte, of the
// size worked out before it was written, whatever mix of records read and
// records written the handle holds.
func TestWriteSpansAreTheLinesAsWritten(t *testing.T) {
	ctx := context.Background()
	f := vaultOf(t, 300)
	f.now = fixedNow // so the size worked out again in approve is the same
	check := func(step string) {
		t.Helper()
		got, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.index(); err != nil {
			t.Fatal(err)
		}
		lines := contents{hdr: f.cur.hdr}
		for _, e := range f.cur.entries {
			lines.entries = append(lines.entries, entry{slot: e.slot, blob: e.blob})
		}
		var want bytes.Buffer
		if _, err := writeVault(&want, &lines, nil, 0, nil); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("%s: the file (%d bytes) differs from its records written line by line (%d bytes)", step, len(got), want.Len())
		}
		if f.heldSize() != int64(len(got)) {
			t.Fatalf("%s: the handle holds a file of %d bytes; the file has %d", step, f.heldSize(), len(got))
		}
		sameAsFile(t, f, f.path, f.idPath)
	}
	check("read")
	steps := []struct {
		what string
		ws   vault.Writes
	}{
		{"a record replaced", vault.Writes{put("bulk/rec-00150", "new")}},
		{"its neighbour replaced", vault.Writes{put("bulk/rec-00151", "newer, longer value")}},
		{"the first record replaced", vault.Writes{put("bulk/rec-00000", "first")}},
		{"a record added", vault.Writes{put("app/new", "added")}},
		{"a record removed", vault.Writes{{Kind: vault.Remove, Name: "bulk/rec-00200"}}},
		{"a small batch", append(batchOf(vault.Put, 100, 110), append(batchOf(vault.Remove, 290, 300), put("app/other", "x"))...)},
		{"every record removed but one", append(append(batchOf(vault.Remove, 0, 200), batchOf(vault.Remove, 201, 290)...), vault.Write{Kind: vault.Remove, Name: "app/new"}, vault.Write{Kind: vault.Remove, Name: "app/other"})},
		{"the last record removed", vault.Writes{{Kind: vault.Remove, Name: "warm/up"}}},
		{"a record into an empty vault", vault.Writes{put("app/only", "v")}},
	}
	for _, s := range steps {
		before := f.heldSize()
		var size int64
		if _, err := f.ApplyBatch(ctx, s.ws, func([]vault.Meta) error {
			changes, err := f.changes(s.ws)
			if err == nil {
				size, err = f.sizeWith(s.ws, changes, f.now().UTC(), f.cur.gen+1)
			}
			return err
		}); err != nil {
			t.Fatalf("%s: %v", s.what, err)
		}
		if f.refresh() != nil || f.heldSize() != size {
			t.Fatalf("%s: from %d bytes, a write worked out a file of %d bytes and made one of %d", s.what, before, size, f.heldSize())
		}
		check(s.what)
	}
	// And a group, whose size is worked out as writes are added.
	g := groupOf(t, f, put("app/a", "1"), put("app/only", "2"), put("app/a", "3"))
	if err := g.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	check("a group")
}

// After many puts to different records, a write still copies most of the
// records in spans of the lines as read: once a write copied more than
// looseMax records line by line, the handle reads the file again, and the
// records it holds as lines of their own are few again.
func TestManyPutsKeepSpans(t *testing.T) {
	ctx := context.Background()
	const n = 2_000
	f := vaultOf(t, n)
	limit, rereads := looseMax(n+1), 0
	const puts = 400
	for i := range puts {
		name := fmt.Sprintf("bulk/rec-%05d", (i*7919)%n) // a different record each time
		if _, err := f.Apply(ctx, put(name, "v"), allow); err != nil {
			t.Fatal(err)
		}
		if f.stale {
			rereads++
		}
		if err := f.refresh(); err != nil {
			t.Fatal(err)
		}
		if err := f.index(); err != nil {
			t.Fatal(err)
		}
		loose := 0
		for _, e := range f.cur.entries {
			if e.at == 0 {
				loose++
			}
		}
		if loose > limit+1 {
			t.Fatalf("after %d puts the handle holds %d records as lines of their own; want at most %d", i+1, loose, limit+1)
		}
	}
	if rereads == 0 || rereads > puts/limit+1 {
		t.Errorf("%d puts made the handle reread the file %d times; want about once every %d", puts, rereads, limit)
	}
	sameAsFile(t, f, f.path, f.idPath)
}
