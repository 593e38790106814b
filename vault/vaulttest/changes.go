package vaulttest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/arca-secrets/arca/vault"
)

// changeWant is a change the suite expects Changes to report.
type changeWant struct {
	name  string
	state vault.VersionState
	v     uint64
	at    time.Time
}

// changes asks s for the changes since, which must be answered.
func (f *fixture) changes(s vault.Store, since string, limit int) vault.Changes {
	f.t.Helper()
	ch, err := s.Changes(f.t.Context(), since, limit)
	if err != nil {
		f.t.Fatalf("Changes: %v", err)
	}
	if ch.Cursor == "" {
		f.t.Fatalf("Changes: no cursor")
	}
	return ch
}

// wantNoChanges checks that nothing changed since cursor: no change, the
// same cursor, neither truncated nor reset.
func (f *fixture) wantNoChanges(s vault.Store, cursor string) {
	f.t.Helper()
	ch := f.changes(s, cursor, 100)
	if len(ch.Changes) != 0 || ch.Truncated || ch.Reset || ch.Cursor != cursor {
		f.t.Errorf("Changes with nothing changed: %d changes %v, truncated %t, reset %t, same cursor %t; want none, the same cursor",
			len(ch.Changes), changeNames(ch.Changes), ch.Truncated, ch.Reset, ch.Cursor == cursor)
	}
}

// Changes reports each name whose state changed since a cursor, once, with
// its state now, in the order they last changed; the first cursor comes
// with no change; a cursor it never gave is ErrBadCursor; a rekey resets.
func testChanges(h *hfix) {
	s := h.open()
	h.clock.tick()
	h.must(s, put("x/pre", "p1"))
	h.must(s, put("x/kept", "k1"))
	first := h.changes(s, "", 100)
	if len(first.Changes) != 0 || first.Truncated || first.Reset {
		h.t.Errorf("Changes since nothing: %d changes, truncated %t, reset %t; want only a cursor", len(first.Changes), first.Truncated, first.Reset)
	}
	h.wantNoChanges(s, first.Cursor)

	h.clock.tick()
	h.must(s, put("a/1", "a1"))
	t2 := h.clock.tick()
	h.must(s, put("b/1", "b1"))
	t3 := h.clock.tick()
	h.must(s, put("a/1", "a2"))
	t4 := h.clock.tick()
	h.must(s, rm("x/pre"))
	h.clock.tick()
	h.must(s, put("e/1", "e1"))
	t6 := h.clock.tick()
	h.must(s, destroy("e/1"))
	want := []changeWant{
		{"b/1", vault.StateCurrent, 1, t2},
		{"a/1", vault.StateCurrent, 2, t3},
		{"x/pre", vault.StateDeleted, 1, t4},
		{"e/1", vault.StateErased, 1, t6},
	}
	for _, r := range []vault.Store{s, h.open()} {
		ch := h.changes(r, first.Cursor, 100)
		if ch.Truncated || ch.Reset || ch.Cursor == first.Cursor {
			h.t.Errorf("Changes: truncated %t, reset %t, cursor moved %t; want false, false, true", ch.Truncated, ch.Reset, ch.Cursor != first.Cursor)
		}
		h.wantChanges(ch.Changes, want)
		h.wantNoChanges(r, ch.Cursor)
	}

	for _, bad := range []string{"not a cursor", "%%%"} {
		if _, err := s.Changes(h.t.Context(), bad, 100); !errors.Is(err, vault.ErrBadCursor) {
			h.t.Errorf("Changes since a cursor the vault never gave: err %v, want ErrBadCursor", err)
		}
	}

	k, ok := s.(vault.Keyed)
	if !ok {
		return
	}
	before := h.changes(s, "", 100).Cursor
	if _, err := k.Rekey(h.t.Context()); err != nil {
		h.t.Fatalf("Rekey: %v", err)
	}
	for _, r := range []vault.Store{s, h.open()} {
		ch, err := r.Changes(h.t.Context(), before, 100)
		if err != nil || !ch.Reset || ch.Cursor == "" {
			h.t.Fatalf("Changes since a cursor from before a rekey: reset %t, cursor %t, err %v; want a reset and a cursor", ch.Reset, ch.Cursor != "", err)
		}
		h.wantNoChanges(r, ch.Cursor)
	}
}

// With a small limit, Changes is truncated, and paging through its cursors
// reports each changed name exactly once.
func testChangesPages(h *hfix) {
	s := h.open()
	start := h.changes(s, "", 2).Cursor
	var want []changeWant
	for i := range 7 {
		t := h.clock.tick()
		name := fmt.Sprintf("p/%d", i)
		h.must(s, put(name, "v"))
		want = append(want, changeWant{name, vault.StateCurrent, 1, t})
	}
	h.wantPages(s, start, want)
}

// Names changed by one commit (a batch, a group) are paged through like
// any others: a page may end among them.
func testChangesPagesOneCommit(f *fixture) {
	s := f.open()
	start := f.changes(s, "", 2).Cursor
	t := f.clock.tick()
	ws := puts("batch", 5)
	if _, _, err := f.applyBatch(s, ws, nil); err != nil {
		f.t.Fatalf("ApplyBatch: %v", err)
	}
	var want []changeWant
	for _, w := range ws {
		want = append(want, changeWant{w.Name, vault.StateCurrent, 1, t})
	}
	f.wantPages(s, start, want)

	start = f.changes(s, "", 2).Cursor
	t = f.clock.tick()
	g := f.group(s)
	defer g.Abort()
	want = nil
	for _, w := range puts("group", 5) {
		if _, _, err := f.groupAdd(g, w, nil); err != nil {
			f.t.Fatalf("Add: %v", err)
		}
		want = append(want, changeWant{w.Name, vault.StateCurrent, 1, t})
	}
	if err := g.Commit(f.t.Context()); err != nil {
		f.t.Fatalf("Commit: %v", err)
	}
	f.wantPages(s, start, want)
}

// wantPages pages through the changes since start, two at a time, and
// checks that they are want, each once, in order when they changed at
// different times.
func (f *fixture) wantPages(s vault.Store, start string, want []changeWant) {
	f.t.Helper()
	cursor, seen := start, map[string]int{}
	var got []vault.Change
	for page := 0; ; page++ {
		if page > len(want) {
			f.t.Fatalf("Changes with limit 2: still truncated after %d pages", page)
		}
		ch := f.changes(f.open(), cursor, 2)
		if len(ch.Changes) > 2 || ch.Reset {
			f.t.Fatalf("Changes with limit 2: %d changes, reset %t", len(ch.Changes), ch.Reset)
		}
		for _, c := range ch.Changes {
			seen[c.Name]++
		}
		got, cursor = append(got, ch.Changes...), ch.Cursor
		if !ch.Truncated {
			break
		}
	}
	for name, n := range seen {
		if n != 1 {
			f.t.Errorf("paging Changes reported %s %d times, want once", name, n)
		}
	}
	if sameTime(want) {
		slices.SortFunc(got, func(a, b vault.Change) int { return strings.Compare(a.Name, b.Name) })
	}
	f.wantChanges(got, want)
	f.wantNoChanges(s, cursor)
}

// sameTime reports whether every change of want is at one time: one
// commit, whose names may come in any order.
func sameTime(want []changeWant) bool {
	for _, w := range want {
		if !w.at.Equal(want[0].at) {
			return false
		}
	}
	return true
}

// wantChanges checks that got is want, in order, each at its time in UTC.
func (f *fixture) wantChanges(got []vault.Change, want []changeWant) {
	f.t.Helper()
	if len(got) != len(want) {
		f.t.Errorf("Changes: %v, want %d of them", changeNames(got), len(want))
		return
	}
	for i, c := range got {
		w := want[i]
		if c.Name != w.name || c.State != w.state || c.Version != w.v {
			f.t.Errorf("Changes[%d]: %s %s %d, want %s %s %d", i, c.Name, c.State, c.Version, w.name, w.state, w.v)
		}
		if d := diffTime("at", c.At, w.at); d != nil {
			f.t.Errorf("Changes[%d] (%s): %s", i, c.Name, joinDiffs(d))
		}
	}
}

func changeNames(cs []vault.Change) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = fmt.Sprintf("%s:%s:%d", c.Name, c.State, c.Version)
	}
	return out
}
