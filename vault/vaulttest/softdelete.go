package vaulttest

import (
	"time"

	"github.com/arca-secrets/arca/vault"
)

// keepDeleted is how long the soft-delete cases keep a removed name.
const keepDeleted = time.Hour

// softHistory is the history of the soft-delete cases.
func softHistory() vault.History {
	return vault.History{MaxVersions: vault.DefaultMaxVersions, KeepDeleted: keepDeleted}
}

// rm soft-deletes while keep_deleted is above zero: the name is not read
// nor listed, ListDeleted has it, its chain keeps the removed version
// first; undelete makes that version current again as a new version.
func testSoftDelete(h *hfix) {
	s, n := h.openWith(softHistory()), "app/key"
	t1 := h.clock.tick()
	h.must(s, put(n, "a1"))
	t2 := h.clock.tick()
	h.must(s, put(n, "a2"))
	other := h.must(s, put("app/other", "b"))
	t3 := h.clock.tick()
	removed := vault.Meta{Name: n, Version: 2, CreatedAt: t1, UpdatedAt: t2}
	h.wantWrite(s, rm(n), removed, &vault.Touch{DeletedAt: t3})

	h.wantNotFound(s, n)
	h.wantList(s, []vault.Meta{other})
	removed.Touch = &vault.Touch{DeletedAt: t3}
	h.wantDeleted(s, []vault.Meta{removed})
	h.wantDeleted(h.open(), []vault.Meta{removed})
	h.wantChain(s, n, chainWant{previous: []kept{{2, "a2"}, {1, "a1"}}, highest: 2, deletedAt: t3})
	c := h.chain(s, n)
	if st, v := c.State(); st != vault.StateDeleted || v != 2 {
		h.t.Errorf("State of a soft-deleted name: %s %d, want deleted 2", st, v)
	}

	h.clock.tick()
	h.wantRefused(s, rm(n), isNotFound())
	h.wantRefused(s, rotate(n, "x"), isNotFound())
	h.wantRefused(s, rollback(n, 1), isNotFound())
	h.wantRefused(s, undelete("app/other"), isNotFound())
	h.wantRefused(s, undelete("app/never"), isNotFound())

	t4 := h.clock.tick()
	back := h.wantWrite(s, undelete(n), vault.Meta{Name: n, Version: 3, CreatedAt: t1, UpdatedAt: t4}, &vault.Touch{From: 2})
	h.wantChain(s, n, chainWant{current: kept{3, "a2"}, previous: []kept{{2, "a2"}, {1, "a1"}}, highest: 3})
	h.wantDeleted(s, nil)
	h.wantList(h.open(), []vault.Meta{back, other})
	h.wantRefused(s, undelete(n), isNotFound())
}

// rm with keep_deleted 0 erases every version at once; the name keeps its
// highest version.
func testRemoveErases(h *hfix) {
	s, n := h.openWith(vault.History{MaxVersions: vault.DefaultMaxVersions}), "app/key"
	t1 := h.clock.tick()
	h.must(s, put(n, "a1"))
	t2 := h.clock.tick()
	h.must(s, put(n, "a2"))
	h.clock.tick()
	h.wantWrite(s, rm(n), vault.Meta{Name: n, Version: 2, CreatedAt: t1, UpdatedAt: t2}, &vault.Touch{Erased: []uint64{1, 2}, Gone: true})
	h.wantKnownOnly(s, n, 2)
	h.wantDeleted(s, nil)
	h.wantList(s, nil)
	h.wantRefused(s, undelete(n), isNotFound())
	h.wantRefused(s, rm(n), isNotFound())
	t4 := h.clock.tick()
	h.wantWrite(s, put(n, "a3"), vault.Meta{Name: n, Version: 3, CreatedAt: t4, UpdatedAt: t4, Created: true}, nil)
}

// Past keep_deleted, the next write of the name erases what rm kept before
// it writes; numbering continues.
func testExpiredByWrite(h *hfix) {
	s, n := h.openWith(softHistory()), "app/key"
	for _, value := range []string{"a1", "a2", "a3"} {
		h.clock.tick()
		h.must(s, put(n, value))
	}
	t := h.clock.tick()
	h.must(s, rm(n))
	h.clock.advance(keepDeleted - time.Second)
	h.wantDeleted(s, []vault.Meta{h.deletedMeta(s, n, t)})
	h.clock.advance(2 * time.Second)
	h.wantRefused(s, undelete(n), isNotFound())
	// Reads show what is kept: until a write or a check erases it, the
	// name is still soft-deleted.
	h.wantChain(s, n, chainWant{previous: []kept{{3, "a3"}, {2, "a2"}, {1, "a1"}}, highest: 3, deletedAt: t})
	t2 := h.clock.tick()
	h.wantWrite(s, put(n, "a4"), vault.Meta{Name: n, Version: 4, CreatedAt: t2, UpdatedAt: t2, Created: true}, &vault.Touch{Erased: []uint64{1, 2, 3}})
	h.wantChain(s, n, chainWant{current: kept{4, "a4"}, highest: 4})
	h.wantDeleted(s, nil)
}

// Check erases the soft-deleted names past keep_deleted, and only those;
// Changes reports what it erased.
func testExpiredByCheck(h *hfix) {
	s := h.openWith(softHistory())
	for _, value := range []string{"x1", "x2", "x3"} {
		h.clock.tick()
		h.must(s, put("app/x", value))
	}
	h.must(s, put("app/y", "y1"))
	h.wantReport(s, vault.Report{Records: 2, Versions: 2})

	tx := h.clock.tick()
	h.must(s, rm("app/x"))
	h.clock.advance(keepDeleted / 2)
	ty := h.clock.tick()
	h.must(s, rm("app/y"))
	h.must(s, put("app/z", "z1"))
	h.wantDeleted(s, []vault.Meta{h.deletedMeta(s, "app/x", tx), h.deletedMeta(s, "app/y", ty)})
	cursor := h.changes(s, "", 100).Cursor
	checked := h.clock.advance(keepDeleted/2 + time.Second)
	// y's removed version is a kept version: Check authenticates it.
	h.wantReport(s, vault.Report{Records: 1, Versions: 1, Erased: 1})
	h.wantKnownOnly(s, "app/x", 3)
	h.wantChain(s, "app/y", chainWant{previous: []kept{{1, "y1"}}, highest: 1, deletedAt: ty})
	h.wantDeleted(h.open(), []vault.Meta{h.deletedMeta(s, "app/y", ty)})
	h.wantReport(s, vault.Report{Records: 1, Versions: 1})
	h.wantChanges(h.changes(h.open(), cursor, 100).Changes, []changeWant{{"app/x", vault.StateErased, 3, checked}})
	t := h.clock.tick()
	h.wantWrite(s, put("app/x", "x4"), vault.Meta{Name: "app/x", Version: 4, CreatedAt: t, UpdatedAt: t, Created: true}, nil)
}

// deletedMeta is what ListDeleted must show of name, soft-deleted at t:
// the metadata of its removed version.
func (f *fixture) deletedMeta(s vault.Store, name string, t time.Time) vault.Meta {
	f.t.Helper()
	c := f.chain(s, name)
	if len(c.Previous) == 0 {
		f.t.Fatalf("Chain(%s): no version kept of a soft-deleted name", name)
	}
	m := c.Previous[0].Meta
	m.Touch = &vault.Touch{DeletedAt: t}
	return m
}

// wantDeleted checks that ListDeleted gives exactly want, in order, each
// with its Touch.DeletedAt.
func (f *fixture) wantDeleted(s vault.Store, want []vault.Meta) {
	f.t.Helper()
	got, err := s.ListDeleted(f.t.Context())
	if err != nil {
		f.t.Fatalf("ListDeleted: %v", err)
	}
	if len(got) != len(want) {
		f.t.Fatalf("ListDeleted: %d names %v, want %d %v", len(got), names(got), len(want), names(want))
	}
	for i := range got {
		w := want[i]
		w.Created = false
		if d := diffMeta(got[i], w); d != "" {
			f.t.Errorf("ListDeleted[%d]: %s", i, d)
		}
		if got[i].Touch == nil || w.Touch == nil {
			f.t.Errorf("ListDeleted[%d]: touch %v, want deleted_at set", i, got[i].Touch)
			continue
		}
		if d := diffTime("deleted_at", got[i].Touch.DeletedAt, w.Touch.DeletedAt); d != nil {
			f.t.Errorf("ListDeleted[%d]: %s", i, joinDiffs(d))
		}
	}
}

// wantReport checks a Check's counts through s, and that it found no
// problem.
func (f *fixture) wantReport(s vault.Store, want vault.Report) {
	f.t.Helper()
	rep, err := s.Check(f.t.Context())
	if err != nil {
		f.t.Fatalf("Check: %v", err)
	}
	if len(rep.Problems) != 0 {
		f.t.Errorf("Check: problems %q", rep.Problems)
	}
	if rep.Records != want.Records || rep.Versions != want.Versions || rep.Erased != want.Erased {
		f.t.Errorf("Check: %d records, %d versions, %d erased; want %d, %d, %d", rep.Records, rep.Versions, rep.Erased, want.Records, want.Versions, want.Erased)
	}
}
