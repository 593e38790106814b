package file

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/vault"
)

// lineParts is the blob of slot's line in the vault at path, split.
func lineParts(t *testing.T, path, slot string) (cur, gen, hist string) {
	t.Helper()
	_, lines := fileLines(t, path)
	l, ok := lines[slot]
	if !ok {
		t.Fatalf("no line for slot %s", slot)
	}
	blob := l[1+slotHexSize+len(`":"`) : len(l)-1]
	parts := strings.Split(blob, ".")
	if len(parts) != 3 {
		t.Fatalf("a line not in the history form")
	}
	return parts[0], parts[1], parts[2]
}

// setLine replaces the blob of slot's line in the vault at path.
func setLine(t *testing.T, path, slot, cur, gen, hist string) {
	t.Helper()
	c, g, h := lineParts(t, path, slot)
	data := strings.Replace(string(fileBytes(t, path)), c+"."+g+"."+h, cur+"."+gen+"."+hist, 1)
	if err := renameOver(path, []byte(data)); err != nil {
		t.Fatal(err)
	}
}

// wantBroken checks that Chain of name fails without quoting it, and that
// Check reports a problem.
func wantBroken(t *testing.T, s vault.Store, name string) {
	t.Helper()
	_, err := s.Chain(context.Background(), name)
	if err == nil || errors.Is(err, vault.ErrNotFound) {
		t.Errorf("Chain(%s): %v, want an authentication error", name, err)
	} else if strings.Contains(err.Error(), name) {
		t.Errorf("the error quotes the name")
	}
	if rep, err := s.Check(context.Background()); err != nil || len(rep.Problems) == 0 {
		t.Errorf("Check reports no problem: %+v, %v", rep, err)
	}
}

// A history part is bound to its slot: swapped between two lines, neither
// opens.
func TestHistorySwapFails(t *testing.T) {
	f, path, idPath, clk := histVault(t)
	do(t, f, putV("app/one", "1"))
	do(t, f, putV("app/two", "2"))
	s1, s2 := SlotOf(f, "app/one"), SlotOf(f, "app/two")
	c1, g1, h1 := lineParts(t, path, s1)
	c2, g2, h2 := lineParts(t, path, s2)
	setLine(t, path, s1, c1, g1, h2)
	setLine(t, path, s2, c2, g2, h1)
	g := reopen(t, path, idPath, clk)
	wantBroken(t, g, "app/one")
	wantBroken(t, g, "app/two")
}

// A current record replayed beside a later history part is refused by
// whatever opens the chain. (A get reads the current record alone: a line
// put back whole, or its current record, is the rollback of one record
// that whoever can write the file can always do.)
func TestReplayedCurrentFails(t *testing.T) {
	f, path, idPath, clk := histVault(t)
	do(t, f, putV("app/k", "old"))
	old, _, _ := lineParts(t, path, SlotOf(f, "app/k"))
	do(t, f, putV("app/k", "new"))
	slot := SlotOf(f, "app/k")
	good := fileBytes(t, path)
	_, gen, hist := lineParts(t, path, slot)
	setLine(t, path, slot, old, gen, hist)
	wantBroken(t, reopen(t, path, idPath, clk), "app/k")
	// Nor may a soft-deleted name's history stand beside a current record.
	if err := renameOver(path, good); err != nil {
		t.Fatal(err)
	}
	do(t, reopen(t, path, idPath, clk), vault.Write{Kind: vault.Remove, Name: "app/k"})
	_, gen, hist = lineParts(t, path, slot)
	setLine(t, path, slot, old, gen, hist)
	wantBroken(t, reopen(t, path, idPath, clk), "app/k")
}

// A generation is not sealed: changed to another under the newest commit's,
// the line still reads (only changes orders by it); changed past it, or to
// anything but a generation, the vault is corrupt, an error and never a
// wrong value.
func TestGenerationTampered(t *testing.T) {
	f, path, idPath, clk := histVault(t)
	do(t, f, putV("app/k", "v1"))
	do(t, f, putV("app/k", "v2"))
	do(t, f, putV("app/other", "x"))
	slot := SlotOf(f, "app/k")
	cur, _, hist := lineParts(t, path, slot)
	setLine(t, path, slot, cur, "1", hist)
	g := reopen(t, path, idPath, clk)
	if r, err := g.Get(context.Background(), "app/k"); err != nil || string(r.Value.Reveal()) != "v2" {
		t.Fatalf("Get after the generation changed: %v", err)
	}
	if got := values(chainOf(t, g, "app/k")); len(got) != 2 {
		t.Errorf("Chain after the generation changed: %q", got)
	}
	ch, err := g.Changes(context.Background(), "", 0)
	if err != nil || !strings.Contains(ch.Cursor, ".3..") {
		t.Errorf("the cursor follows the highest generation: %q, %v", ch.Cursor, err)
	}
	setLine(t, path, slot, cur, "7", hist)
	if _, err := reopen(t, path, idPath, clk).Changes(context.Background(), "", 0); err == nil || !strings.Contains(err.Error(), "corrupt") || !strings.Contains(err.Error(), "header's newest commit") {
		t.Errorf("a generation past the newest commit's: %v, want a corrupt vault naming the header", err)
	}
	for _, bad := range []string{"07", "0", "-1", "x", "", "99999999999999999999"} {
		setLine(t, path, slot, cur, "2", hist)
		setLine(t, path, slot, cur, bad, hist)
		h, err := open(path, idPath, clk.now, defaultOptions())
		if err == nil {
			_, err = h.Get(context.Background(), "app/k")
			h.Close()
		}
		if err == nil || !strings.Contains(err.Error(), "corrupt") {
			t.Errorf("generation %q: %v, want a corrupt vault", bad, err)
		}
	}
}

// An rm of a line that fails to authenticate leaves the name erased with
// nothing kept: changes reports it, the vault is healthy again, and the
// name starts over.
func TestRemoveDamagedLine(t *testing.T) {
	f, path, idPath, clk := histVault(t)
	do(t, f, putV("app/k", "v1"))
	do(t, f, putV("app/k", "v2"))
	slot := SlotOf(f, "app/k")
	cur, gen, hist := lineParts(t, path, slot)
	setLine(t, path, slot, cur, gen, hist[:len(hist)-8]+strings.Repeat("A", 8))
	g := reopen(t, path, idPath, clk)
	since := changes(t, g, "", 0).Cursor
	m, err := g.Apply(context.Background(), vault.Write{Kind: vault.Remove, Name: "app/k"}, approveAll)
	if err != nil || m.Touch == nil || !m.Touch.Gone {
		t.Fatalf("rm of a damaged line: %+v, %v", m, err)
	}
	if _, err := g.Get(context.Background(), "app/k"); !errors.Is(err, vault.ErrNotFound) {
		t.Errorf("Get after the rm: %v", err)
	}
	if _, err := g.Chain(context.Background(), "app/k"); !errors.Is(err, vault.ErrNotFound) {
		t.Errorf("Chain after the rm: %v", err)
	}
	ch := changes(t, g, since, 0)
	if len(ch.Changes) != 1 || ch.Changes[0].Name != "app/k" || ch.Changes[0].State != vault.StateErased || ch.Changes[0].Version != 0 {
		t.Errorf("changes after the rm: %+v", ch.Changes)
	}
	if rep, err := g.Check(context.Background()); err != nil || len(rep.Problems) != 0 || rep.Records != 0 {
		t.Errorf("Check after the rm: %+v, %v", rep, err)
	}
	if m := do(t, g, putV("app/k", "again")); m.Version != 1 || !m.Created {
		t.Errorf("a put after the rm: version %d created %t", m.Version, m.Created)
	}
}
