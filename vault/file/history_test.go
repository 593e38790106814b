package file

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/identity"
	"github.com/arca-secrets/arca/vault/internal/seal"
)

// clock is a test's time: it moves only when the test moves it.
type clock struct{ t time.Time }

func (c *clock) now() time.Time                 { return c.t }
func (c *clock) tick(d time.Duration) time.Time { c.t = c.t.Add(d); return c.t }

// histVault is an empty vault opened with a clock of its own.
func histVault(t *testing.T) (*Vault, string, string, *clock) {
	t.Helper()
	path, idPath := newVaultFiles(t)
	clk := &clock{t: time.Date(2026, 3, 4, 5, 6, 7, 8, time.UTC)}
	f, err := open(path, idPath, clk.now, defaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, path, idPath, clk
}

// reopen is a fresh handle on the vault at path, on clk.
func reopen(t *testing.T, path, idPath string, clk *clock) *Vault {
	t.Helper()
	f, err := open(path, idPath, clk.now, defaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func do(t *testing.T, s vault.Store, w vault.Write) vault.Meta {
	t.Helper()
	m, err := s.Apply(context.Background(), w, approveAll)
	if err != nil {
		t.Fatalf("%v of %s: %v", w.Kind, w.Name, err)
	}
	return m
}

func putV(name, value string) vault.Write {
	return vault.Write{Kind: vault.Put, Name: name, Value: vault.NewSecret([]byte(value))}
}

// values is what the chain keeps, newest first: current, then previous.
func values(c vault.Chain) []string {
	var out []string
	if c.HasCurrent {
		out = append(out, string(c.Current.Value.Reveal()))
	}
	for _, r := range c.Previous {
		out = append(out, string(r.Value.Reveal()))
	}
	return out
}

func chainOf(t *testing.T, s vault.Store, name string) vault.Chain {
	t.Helper()
	c, err := s.Chain(context.Background(), name)
	if err != nil {
		t.Fatalf("Chain(%s): %v", name, err)
	}
	return c
}

// legacyVault writes a vault as an arca before history wrote one (format
// arca-vault/1, every line a sealed record alone) holding recs, and
// returns its path and identity.
func legacyVault(t *testing.T, recs []vault.Record) (path, idPath string) {
	t.Helper()
	dir := t.TempDir()
	path, idPath = filepath.Join(dir, "v", "old.vault"), filepath.Join(dir, "id", "identity.txt")
	if _, _, err := identity.Ensure(idPath, time.Now()); err != nil {
		t.Fatal(err)
	}
	ids, err := identity.Load(idPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	k, err := seal.Fresh()
	if err != nil {
		t.Fatal(err)
	}
	var c contents
	if c.hdr, err = seal.NewHeader(formatV1, k, identity.RecipientsOf(ids)); err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		slot := k.Slot(r.Name)
		b, err := k.Seal(slot, r)
		if err != nil {
			t.Fatal(err)
		}
		c.entries = append(c.entries, entry{slot: slot, blob: encodeBlob(b)})
	}
	slices.SortFunc(c.entries, func(a, b entry) int { return strings.Compare(a.slot, b.slot) })
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := defaultOptions().replace(path, path, &c, 0); err != nil {
		t.Fatal(err)
	}
	return path, idPath
}

func legacyRecord(name, value string, version uint64, at time.Time) vault.Record {
	return vault.Record{Meta: vault.Meta{Name: name, Version: version, CreatedAt: at, UpdatedAt: at}, Value: vault.NewSecret([]byte(value))}
}

// fileLines is the record lines of the vault at path, by slot.
func fileLines(t *testing.T, path string) (header string, lines map[string]string) {
	t.Helper()
	text := string(fileBytes(t, path))
	all := strings.Split(strings.TrimSuffix(text, "\n}}\n"), "\n")
	lines = map[string]string{}
	for _, l := range all[1:] {
		l = strings.TrimSuffix(l, ",")
		lines[l[1:1+slotHexSize]] = l
	}
	return all[0], lines
}

// A vault an earlier arca wrote opens unchanged: its records read, list
// and count as ever, and reads write nothing. Its first write upgrades the
// header and the lines it touches, no other, and the name written keeps
// the legacy record as its previous version.
func TestLegacyVaultOpensUnchanged(t *testing.T) {
	at := time.Date(2024, 1, 2, 3, 4, 5, 6, time.UTC)
	path, idPath := legacyVault(t, []vault.Record{
		legacyRecord("app/a", "alpha", 3, at), legacyRecord("app/b", "beta", 1, at), legacyRecord("app/c", "gamma", 7, at),
	})
	before := fileBytes(t, path)
	clk := &clock{t: at.Add(time.Hour)}
	f := reopen(t, path, idPath, clk)
	ctx := context.Background()
	if r, err := f.Get(ctx, "app/c"); err != nil || string(r.Value.Reveal()) != "gamma" || r.Version != 7 {
		t.Fatalf("Get of a legacy record: version %d, %v", r.Version, err)
	}
	if ms, err := f.List(ctx); err != nil || len(ms) != 3 {
		t.Fatalf("List: %d, %v", len(ms), err)
	}
	c := chainOf(t, f, "app/a")
	if !c.HasCurrent || c.Highest != 3 || len(c.Previous) != 0 || !c.ChangedAt.Equal(at) {
		t.Errorf("legacy chain: current %t highest %d previous %d changed %v", c.HasCurrent, c.Highest, len(c.Previous), c.ChangedAt)
	}
	if ch, err := f.Changes(ctx, "", 0); err != nil || !strings.Contains(ch.Cursor, ".0..") {
		t.Errorf("the cursor of a vault with no generation: %q, %v", ch.Cursor, err)
	}
	if rep, err := f.Check(ctx); err != nil || len(rep.Problems) != 0 || rep.Records != 3 {
		t.Errorf("Check: %+v, %v", rep, err)
	}
	if !bytes.Equal(fileBytes(t, path), before) {
		t.Fatal("reading a legacy vault changed its file")
	}
	hdr0, lines0 := fileLines(t, path)
	if !strings.Contains(hdr0, `"format":"arca-vault/1"`) {
		t.Fatalf("legacy header: %s", hdr0)
	}

	m := do(t, f, putV("app/a", "alpha2"))
	if m.Version != 4 {
		t.Errorf("a put over legacy version 3 is version %d", m.Version)
	}
	hdr1, lines1 := fileLines(t, path)
	if !strings.Contains(hdr1, `"format":"arca-vault/2"`) {
		t.Errorf("the header after a write: %s", hdr1)
	}
	slotA := SlotOf(f, "app/a")
	for slot, l := range lines1 {
		switch {
		case slot == slotA && strings.Count(l, ".") != 2:
			t.Errorf("the written line holds no history: %s", l)
		case slot != slotA && l != lines0[slot]:
			t.Errorf("a line the write did not touch changed")
		}
	}
	g := reopen(t, path, idPath, clk)
	c = chainOf(t, g, "app/a")
	if got := values(c); !slices.Equal(got, []string{"alpha2", "alpha"}) || c.Previous[0].Version != 3 {
		t.Errorf("after the upgrade: values %q", got)
	}
	if r, err := g.Get(ctx, "app/b"); err != nil || string(r.Value.Reveal()) != "beta" {
		t.Errorf("an untouched legacy line: %v", err)
	}
}

// A name keeps its versions across writes, through every kind of write,
// as a fresh handle reads them; max_versions trims; rm soft-deletes.
func TestHistoryAcrossWrites(t *testing.T) {
	f, path, idPath, clk := histVault(t)
	f.SetHistory(vault.History{MaxVersions: 3, KeepDeleted: time.Hour})
	for _, v := range []string{"v1", "v2", "v3", "v4"} {
		clk.tick(time.Second)
		do(t, f, putV("app/k", v))
	}
	g := reopen(t, path, idPath, clk)
	c := chainOf(t, g, "app/k")
	if got := values(c); !slices.Equal(got, []string{"v4", "v3", "v2"}) || c.Highest != 4 {
		t.Fatalf("after 4 puts with max_versions 3: %q highest %d", got, c.Highest)
	}
	m := do(t, f, vault.Write{Kind: vault.Rollback, Name: "app/k", Version: 2})
	if m.Version != 5 || m.Touch == nil || m.Touch.From != 2 {
		t.Errorf("rollback: %+v", m)
	}
	do(t, f, vault.Write{Kind: vault.Remove, Name: "app/k"})
	if _, err := g.Get(context.Background(), "app/k"); !errors.Is(err, vault.ErrNotFound) {
		t.Errorf("Get of a soft-deleted name: %v", err)
	}
	if ms, _ := g.List(context.Background()); len(ms) != 0 {
		t.Errorf("List shows a soft-deleted name")
	}
	if rs, _ := g.Records(context.Background()); len(rs) != 0 {
		t.Errorf("Records holds a soft-deleted name")
	}
	del, err := g.ListDeleted(context.Background())
	if err != nil || len(del) != 1 || del[0].Version != 5 || del[0].Touch == nil || !del[0].Touch.DeletedAt.Equal(clk.now()) {
		t.Fatalf("ListDeleted: %+v, %v", del, err)
	}
	m = do(t, f, vault.Write{Kind: vault.Undelete, Name: "app/k"})
	if m.Version != 6 {
		t.Errorf("undelete: version %d", m.Version)
	}
	c = chainOf(t, g, "app/k")
	if got := values(c); !slices.Equal(got, []string{"v2", "v2", "v4"}) {
		t.Errorf("after undelete: %q", got)
	}
	do(t, f, vault.Write{Kind: vault.Destroy, Name: "app/k"})
	c = chainOf(t, g, "app/k")
	if c.HasCurrent || len(c.Previous) != 0 || c.Highest != 6 {
		t.Errorf("destroyed: current %t previous %d highest %d", c.HasCurrent, len(c.Previous), c.Highest)
	}
	if m := do(t, f, putV("app/k", "again")); m.Version != 7 || !m.Created {
		t.Errorf("a put after destroy: version %d created %t, want 7 true", m.Version, m.Created)
	}
	chains, err := g.Chains(context.Background())
	if err != nil || len(chains) != 1 || chains[0].Name != "app/k" {
		t.Errorf("Chains: %d, %v", len(chains), err)
	}
}

// A group applies two writes of one name in turn, each a version.
func TestGroupKeepsHistory(t *testing.T) {
	f, path, idPath, clk := histVault(t)
	do(t, f, putV("app/k", "v1"))
	g := groupOf(t, f, putV("app/k", "v2"), vault.Write{Kind: vault.Rotate, Name: "app/k", Value: vault.NewSecret([]byte("v3"))})
	if err := g.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := chainOf(t, reopen(t, path, idPath, clk), "app/k")
	if got := values(c); !slices.Equal(got, []string{"v3", "v2", "v1"}) || c.Current.Version != 3 {
		t.Errorf("after a group of two writes: %q version %d", got, c.Current.Version)
	}
}

// An if_version that does not match writes nothing.
func TestIfVersionConflict(t *testing.T) {
	f, path, _, _ := histVault(t)
	do(t, f, putV("app/k", "v1"))
	before := fileBytes(t, path)
	one := uint64(2)
	w := putV("app/k", "v2")
	w.IfVersion = &one
	_, err := f.Apply(context.Background(), w, func(vault.Meta) error { t.Error("a conflict was approved"); return nil })
	var conflict *vault.ConflictError
	if !errors.As(err, &conflict) || conflict.Current != 1 {
		t.Fatalf("a put with the wrong if_version: %v", err)
	}
	if !bytes.Equal(fileBytes(t, path), before) {
		t.Error("a conflict changed the file")
	}
}
