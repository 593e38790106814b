package file

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arca-secrets/arca/vault"
)

// rewriteLegacy writes the vault at path again as an earlier arca writes
// it (format arca-vault/1, lines without history or generation), under the
// data key of f, holding recs.
func rewriteLegacy(t *testing.T, f *Vault, path string, recs []vault.Record) {
	t.Helper()
	c, err := parseVault(string(fileBytes(t, path)))
	if err != nil {
		t.Fatal(err)
	}
	c.unread, c.raw, c.entries, c.indexed = nil, "", nil, false
	for _, r := range recs {
		slot := f.k.Slot(r.Name)
		b, err := f.k.Seal(slot, r)
		if err != nil {
			t.Fatal(err)
		}
		c.entries = append(c.entries, entry{slot: slot, blob: encodeBlob(b)})
	}
	slices.SortFunc(c.entries, func(a, b entry) int { return strings.Compare(a.slot, b.slot) })
	if err := defaultOptions().replace(path, path, &c, 0); err != nil {
		t.Fatal(err)
	}
}

// A vault file still in format arca-vault/1 may be written by an earlier
// arca beside this one (an upgrade under way: serve on the new binary, a
// terminal on the old). Its lines carry no generation, so a cursor given
// on it cannot account for such a write: changes must answer a reset (or
// the names written), never "nothing changed" while names were written,
// added and removed.
func TestChangesOnLegacyVaultWrittenByEarlierArca(t *testing.T) {
	at := time.Date(2024, 1, 2, 3, 4, 5, 6, time.UTC)
	path, idPath := legacyVault(t, []vault.Record{
		legacyRecord("app/a", "alpha", 1, at), legacyRecord("app/gone", "x", 4, at),
	})
	clk := &clock{t: at.Add(time.Hour)}
	f := reopen(t, path, idPath, clk)
	seen := changes(t, f, "", 0).Cursor

	// The earlier arca: a put over app/a, a new app/b, an rm of app/gone.
	later := at.Add(time.Minute)
	rewriteLegacy(t, f, path, []vault.Record{
		legacyRecord("app/a", "alpha2", 2, later), legacyRecord("app/b", "beta", 1, later),
	})
	g := reopen(t, path, idPath, clk)
	if r, err := g.Get(context.Background(), "app/a"); err != nil || r.Version != 2 {
		t.Fatalf("the earlier arca's write does not read back: version %d, %v", r.Version, err)
	}
	ch := changes(t, g, seen, 0)
	if ch.Reset {
		return
	}
	got := changed(ch)
	for _, want := range []string{"app/a:current", "app/b:current", "app/gone:erased"} {
		if !slices.Contains(got, want) {
			t.Errorf("changes since a cursor on a legacy vault an earlier arca wrote since: %q, reset %t; want a reset or %s among them", got, ch.Reset, want)
		}
	}
}
