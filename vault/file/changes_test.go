package file

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arca-secrets/arca/vault"
)

func changes(t *testing.T, s vault.Store, since string, limit int) vault.Changes {
	t.Helper()
	ch, err := s.Changes(context.Background(), since, limit)
	if err != nil {
		t.Fatalf("Changes(%q): %v", since, err)
	}
	return ch
}

func changed(ch vault.Changes) []string {
	var out []string
	for _, c := range ch.Changes {
		out = append(out, c.Name+":"+string(c.State))
	}
	slices.Sort(out)
	return out
}

// Changes answers each name changed since a cursor once, with its state
// now, in bounded answers; a cursor with nothing since answers nothing.
func TestChangesSinceCursor(t *testing.T) {
	f, path, idPath, clk := histVault(t)
	start := changes(t, f, "", 0)
	if len(start.Changes) != 0 || start.Reset || start.Truncated {
		t.Fatalf("Changes without a cursor: %+v", start)
	}
	do(t, f, putV("app/a", "1"))
	do(t, f, putV("app/b", "1"))
	do(t, f, putV("app/a", "2"))
	clk.tick(time.Minute)
	g := reopen(t, path, idPath, clk)
	ch := changes(t, g, start.Cursor, 0)
	if got := changed(ch); !slices.Equal(got, []string{"app/a:current", "app/b:current"}) || ch.Truncated {
		t.Fatalf("changes since the start: %q truncated %t", got, ch.Truncated)
	}
	if ch.Changes[0].Name != "app/b" || ch.Changes[1].Version != 2 {
		t.Errorf("changes not in the order they changed: %+v", ch.Changes)
	}
	if again := changes(t, g, ch.Cursor, 0); len(again.Changes) != 0 || again.Cursor != ch.Cursor {
		t.Errorf("nothing changed: %+v", again)
	}

	do(t, f, vault.Write{Kind: vault.Remove, Name: "app/a"})
	do(t, f, putV("app/c", "1"))
	do(t, f, vault.Write{Kind: vault.Destroy, Name: "app/b"})
	first := changes(t, g, ch.Cursor, 2)
	if !first.Truncated || len(first.Changes) != 2 {
		t.Fatalf("a bounded answer: %+v", first)
	}
	rest := changes(t, g, first.Cursor, 2)
	if rest.Truncated || len(rest.Changes) != 1 {
		t.Fatalf("the rest: %+v", rest)
	}
	all := vault.Changes{Changes: append(first.Changes, rest.Changes...)}
	if got := changed(all); !slices.Equal(got, []string{"app/a:deleted", "app/b:erased", "app/c:current"}) {
		t.Errorf("changes in two answers: %q", got)
	}
	if rest.Cursor != changes(t, g, "", 0).Cursor {
		t.Errorf("the last answer's cursor %q is not the current one", rest.Cursor)
	}
}

// A cursor arca never gave is ErrBadCursor; one of another vault, of a
// rekeyed one, or of a generation the file does not reach, is a reset.
func TestChangesCursors(t *testing.T) {
	f, path, idPath, clk := histVault(t)
	do(t, f, putV("app/a", "1"))
	cur := changes(t, f, "", 0).Cursor
	parts := strings.Split(cur, ".")
	mark := parts[4]
	for _, bad := range []string{
		"x", "f1", "f2." + parts[1] + ".1.." + mark, cur + ".", cur + "0", strings.ToUpper(cur),
		"f1." + parts[1] + ".01.." + mark, "f1." + parts[1] + "..." + mark, "f1." + parts[1][2:] + ".1.." + mark,
		"f1." + parts[1] + ".1." + strings.Repeat("A", slotHexSize) + "." + mark, "f1." + parts[1] + ".1.ab." + mark,
		"f1." + parts[1] + ".1.", // the form before marks
		"f1." + parts[1] + ".1..", "f1." + parts[1] + ".1.." + mark[1:], "f1." + parts[1] + ".1.." + strings.ToUpper(mark),
		"f1." + parts[1] + ".1.." + mark + "0", "f1." + parts[1] + ".1.." + mark[:15] + "g",
	} {
		if _, err := f.Changes(context.Background(), bad, 0); !errors.Is(err, vault.ErrBadCursor) {
			t.Errorf("cursor %q: %v, want ErrBadCursor", bad, err)
		}
	}
	ahead := "f1." + parts[1] + ".99.." + mark
	if ch := changes(t, f, ahead, 0); !ch.Reset || ch.Cursor != cur || len(ch.Changes) != 0 {
		t.Errorf("a cursor past the file: %+v", ch)
	}
	// A well-formed mark that is not the file's at the cursor's generation
	// is a cursor of another file history: a reset, not a bad cursor.
	for _, other := range []string{"0123456789abcdef", strings.Repeat("0", 16)} {
		if other == mark {
			continue
		}
		if ch := changes(t, f, "f1."+parts[1]+".1.."+other, 0); !ch.Reset || ch.Cursor != cur || len(ch.Changes) != 0 {
			t.Errorf("a cursor with another mark: %+v", ch)
		}
	}
	other, _, _, _ := histVault(t)
	if ch := changes(t, other, cur, 0); !ch.Reset {
		t.Errorf("another vault's cursor: %+v", ch)
	}
	if _, err := reopen(t, path, idPath, clk).Rekey(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ch := changes(t, f, cur, 0); !ch.Reset || ch.Cursor == cur {
		t.Errorf("a cursor from before a rekey: %+v", ch)
	}
}

// Check authenticates every kept version and erases the soft-deleted
// names past keep_deleted, in one write; with none to erase it writes
// nothing.
func TestCheckErasesExpired(t *testing.T) {
	f, path, idPath, clk := histVault(t)
	f.SetHistory(vault.History{MaxVersions: 10, KeepDeleted: time.Hour})
	for _, v := range []string{"1", "2", "3"} {
		do(t, f, putV("app/kept", v))
		do(t, f, putV("app/gone", v))
	}
	do(t, f, vault.Write{Kind: vault.Remove, Name: "app/gone"})
	fi0, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := f.Check(context.Background())
	if err != nil || len(rep.Problems) != 0 || rep.Records != 1 || rep.Versions != 5 || rep.Erased != 0 {
		t.Fatalf("Check before keep_deleted passed: %+v, %v", rep, err)
	}
	if fi, err := os.Stat(path); err != nil || !os.SameFile(fi, fi0) {
		t.Fatal("a Check with nothing to erase wrote the vault")
	}
	clk.tick(2 * time.Hour)
	rep, err = f.Check(context.Background())
	if err != nil || len(rep.Problems) != 0 || rep.Erased != 1 || rep.Versions != 2 {
		t.Fatalf("Check past keep_deleted: %+v, %v", rep, err)
	}
	c := chainOf(t, reopen(t, path, idPath, clk), "app/gone")
	if c.Deleted() || len(c.Previous) != 0 || c.Highest != 3 {
		t.Errorf("an expired name: deleted %t previous %d highest %d", c.Deleted(), len(c.Previous), c.Highest)
	}
	if rep, _ := f.Check(context.Background()); rep.Erased != 0 || rep.Versions != 2 {
		t.Errorf("a second Check: %+v", rep)
	}
}

// A rekey seals every kept version and soft delete again, under new slots.
func TestRekeyKeepsHistory(t *testing.T) {
	f, path, idPath, clk := histVault(t)
	for _, v := range []string{"1", "2", "3"} {
		do(t, f, putV("app/k", v))
		do(t, f, putV("app/del", v))
	}
	do(t, f, vault.Write{Kind: vault.Remove, Name: "app/del"})
	oldSlot := SlotOf(f, "app/k")
	if n, err := f.Rekey(context.Background()); err != nil || n != 1 {
		t.Fatalf("Rekey: %d, %v", n, err)
	}
	g := reopen(t, path, idPath, clk)
	if SlotOf(g, "app/k") == oldSlot {
		t.Fatal("the rekey kept the slot")
	}
	if got := values(chainOf(t, g, "app/k")); !slices.Equal(got, []string{"3", "2", "1"}) {
		t.Errorf("history after a rekey: %q", got)
	}
	del, err := g.ListDeleted(context.Background())
	if err != nil || len(del) != 1 || del[0].Name != "app/del" || del[0].Version != 3 {
		t.Errorf("ListDeleted after a rekey: %+v, %v", del, err)
	}
	if rep, err := g.Check(context.Background()); err != nil || len(rep.Problems) != 0 || rep.Versions != 5 {
		t.Errorf("Check after a rekey: %+v, %v", rep, err)
	}
}
