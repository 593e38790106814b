package vaulttest

import (
	"time"

	"github.com/arca-secrets/arca/vault"
)

// historyCases are the rules of vault.Step every backend follows, each run
// through Apply, a batch and a group.
func historyCases() []historyCase {
	return []historyCase{
		{"HistoryNumbering", testNumbering},
		{"HistoryMaxVersions", testMaxVersions},
		{"HistoryRollback", testRollback},
		{"HistoryDestroy", testDestroy},
		{"HistorySoftDelete", testSoftDelete},
		{"HistoryRemoveErases", testRemoveErases},
		{"HistoryExpiredByWrite", testExpiredByWrite},
		{"HistoryExpiredByCheck", testExpiredByCheck},
		{"HistoryIfVersion", testIfVersion},
		{"HistoryRestore", testRestoreChain},
		{"HistoryRestoreNeverLowers", testRestoreNeverLowers},
		{"HistoryChains", testChains},
		{"HistoryChanges", testChanges},
		{"HistoryChangesPages", testChangesPages},
		{"HistoryIfVersionRace", testIfVersionRace},
	}
}

func put(name, value string) vault.Write {
	return vault.Write{Kind: vault.Put, Name: name, Value: secret(value)}
}

func rotate(name, value string) vault.Write {
	return vault.Write{Kind: vault.Rotate, Name: name, Value: secret(value)}
}

func rm(name string) vault.Write { return vault.Write{Kind: vault.Remove, Name: name} }

func rollback(name string, v uint64) vault.Write {
	return vault.Write{Kind: vault.Rollback, Name: name, Version: v}
}

func undelete(name string) vault.Write { return vault.Write{Kind: vault.Undelete, Name: name} }

// destroy erases versions of name; none given: every version.
func destroy(name string, versions ...uint64) vault.Write {
	return vault.Write{Kind: vault.Destroy, Name: name, Versions: versions}
}

// ifVersion makes w conditional on the current version v.
func ifVersion(w vault.Write, v uint64) vault.Write {
	w.IfVersion = &v
	return w
}

// Version numbers never repeat: a put after rm continues, and so does one
// after every version was destroyed or erased.
func testNumbering(h *hfix) {
	s, n := h.open(), "app/key"
	t1 := h.clock.tick()
	h.wantWrite(s, put(n, "one"), vault.Meta{Name: n, Version: 1, CreatedAt: t1, UpdatedAt: t1, Created: true}, nil)
	t2 := h.clock.tick()
	h.wantWrite(s, put(n, "two"), vault.Meta{Name: n, Version: 2, CreatedAt: t1, UpdatedAt: t2}, nil)
	t3 := h.clock.tick()
	h.wantWrite(s, rotate(n, "three"), vault.Meta{Name: n, Version: 3, CreatedAt: t1, UpdatedAt: t3, RotatedAt: t3}, nil)
	t4 := h.clock.tick()
	h.wantWrite(s, rm(n), vault.Meta{Name: n, Version: 3, CreatedAt: t1, UpdatedAt: t3, RotatedAt: t3}, &vault.Touch{DeletedAt: t4})
	h.wantNotFound(s, n)

	t5 := h.clock.tick()
	h.wantWrite(s, put(n, "four"), vault.Meta{Name: n, Version: 4, CreatedAt: t1, UpdatedAt: t5, RotatedAt: t3, Created: true}, nil)
	h.wantChain(s, n, chainWant{current: kept{4, "four"}, previous: []kept{{3, "three"}, {2, "two"}, {1, "one"}}, highest: 4})

	h.clock.tick()
	h.wantVersion(s, destroy(n), 0, &vault.Touch{Erased: []uint64{1, 2, 3, 4}, Gone: true})
	h.wantKnownOnly(s, n, 4)
	h.wantList(s, nil)
	h.wantDeleted(s, nil)
	t7 := h.clock.tick()
	h.wantWrite(s, put(n, "five"), vault.Meta{Name: n, Version: 5, CreatedAt: t7, UpdatedAt: t7, Created: true}, nil)

	// With keep_deleted 0, rm erases, and numbering still continues.
	now := h.openWith(vault.History{MaxVersions: 10})
	h.clock.tick()
	h.wantWrite(now, rm(n), vault.Meta{Name: n, Version: 5, CreatedAt: t7, UpdatedAt: t7}, &vault.Touch{Erased: []uint64{5}, Gone: true})
	h.wantKnownOnly(s, n, 5)
	t9 := h.clock.tick()
	h.wantWrite(now, put(n, "six"), vault.Meta{Name: n, Version: 6, CreatedAt: t9, UpdatedAt: t9, Created: true}, nil)
	h.wantChain(s, n, chainWant{current: kept{6, "six"}, highest: 6})
}

// A write that leaves more than max_versions erases the oldest in the
// same commit; max_versions 1 keeps no earlier version.
func testMaxVersions(h *hfix) {
	s, n := h.openWith(vault.History{MaxVersions: 3, KeepDeleted: time.Hour}), "app/key"
	for v, value := range []string{"v1", "v2", "v3"} {
		h.clock.tick()
		h.wantVersion(s, put(n, value), uint64(v+1), nil)
	}
	h.wantChain(s, n, chainWant{current: kept{3, "v3"}, previous: []kept{{2, "v2"}, {1, "v1"}}, highest: 3})
	h.clock.tick()
	h.wantVersion(s, put(n, "v4"), 4, &vault.Touch{Erased: []uint64{1}})
	h.wantChain(s, n, chainWant{current: kept{4, "v4"}, previous: []kept{{3, "v3"}, {2, "v2"}}, highest: 4})
	h.clock.tick()
	h.wantVersion(s, rotate(n, "v5"), 5, &vault.Touch{Erased: []uint64{2}})
	// A rollback to the oldest kept version erases it, and writes its value.
	h.clock.tick()
	h.wantVersion(s, rollback(n, 3), 6, &vault.Touch{Erased: []uint64{3}, From: 3})
	h.wantChain(s, n, chainWant{current: kept{6, "v3"}, previous: []kept{{5, "v5"}, {4, "v4"}}, highest: 6})
	h.wantRefused(s, rollback(n, 3), isNotFound(3))

	one := h.openWith(vault.History{MaxVersions: 1, KeepDeleted: time.Hour})
	h.clock.tick()
	h.wantVersion(one, put(n, "v7"), 7, &vault.Touch{Erased: []uint64{4, 5, 6}})
	h.wantChain(s, n, chainWant{current: kept{7, "v7"}, highest: 7})
	h.clock.tick()
	h.wantVersion(one, put(n, "v8"), 8, &vault.Touch{Erased: []uint64{7}})
	h.wantChain(one, n, chainWant{current: kept{8, "v8"}, highest: 8})
	h.wantRefused(one, rollback(n, 7), isNotFound(7))
}

// A rollback writes a kept version's value as a new version; a version not
// kept is a VersionNotFoundError; a soft-deleted name cannot be rolled back.
func testRollback(h *hfix) {
	s, n := h.open(), "app/key"
	t1 := h.clock.tick()
	h.must(s, put(n, "a"))
	h.clock.tick()
	h.must(s, put(n, "b"))
	t3 := h.clock.tick()
	h.must(s, rotate(n, "c"))
	t4 := h.clock.tick()
	h.wantWrite(s, rollback(n, 1), vault.Meta{Name: n, Version: 4, CreatedAt: t1, UpdatedAt: t4, RotatedAt: t3}, &vault.Touch{From: 1})
	h.wantChain(s, n, chainWant{current: kept{4, "a"}, previous: []kept{{3, "c"}, {2, "b"}, {1, "a"}}, highest: 4})
	h.clock.tick()
	h.wantVersion(s, rollback(n, 3), 5, &vault.Touch{From: 3})
	h.wantRecordValue(s, n, "c")

	h.clock.tick()
	h.wantRefused(s, rollback(n, 99), isNotFound(99))
	h.wantRefused(s, rollback("app/never", 1), isNotFound())
	h.must(s, rm(n))
	h.clock.tick()
	h.wantRefused(s, rollback(n, 2), isNotFound())
	h.wantNotFound(s, n)
}

// destroy erases the versions it lists, or all of them; the name keeps its
// highest version; a version not kept changes nothing.
func testDestroy(h *hfix) {
	s, n := h.open(), "app/key"
	for _, value := range []string{"1", "2", "3", "4"} {
		h.clock.tick()
		h.must(s, put(n, value))
	}
	h.clock.tick()
	h.wantVersion(s, destroy(n, 3, 1), 4, &vault.Touch{Erased: []uint64{1, 3}})
	h.wantChain(s, n, chainWant{current: kept{4, "4"}, previous: []kept{{2, "2"}}, highest: 4})
	h.wantRecordValue(s, n, "4")

	h.clock.tick()
	h.wantRefused(s, destroy(n, 2, 99), isNotFound(99))
	h.wantRefused(s, destroy(n, 1), isNotFound(1))
	h.wantRefused(s, destroy("app/never"), isNotFound())

	// Destroying the current version leaves no current record and the
	// earlier versions kept as they were: not removed, so they never
	// expire and undelete has nothing to do.
	h.clock.tick()
	h.wantVersion(s, destroy(n, 4), 0, &vault.Touch{Erased: []uint64{4}})
	h.wantChain(s, n, chainWant{previous: []kept{{2, "2"}}, highest: 4})
	h.wantList(s, nil)
	h.wantDeleted(s, nil)
	h.wantRefused(s, undelete(n), isNotFound())

	h.clock.tick()
	h.wantVersion(s, destroy(n), 0, &vault.Touch{Erased: []uint64{2}, Gone: true})
	h.wantKnownOnly(s, n, 4)
	h.wantDeleted(s, nil)
	h.wantRefused(s, destroy(n), isNotFound())
	h.wantRefused(s, undelete(n), isNotFound())
	t7 := h.clock.tick()
	h.wantWrite(s, put(n, "5"), vault.Meta{Name: n, Version: 5, CreatedAt: t7, UpdatedAt: t7, Created: true}, nil)
}

// wantRecordValue checks that name's current value, through s, is value.
func (f *fixture) wantRecordValue(s vault.Store, name, value string) {
	f.t.Helper()
	if r := f.get(s, name); !secret(value).Equal(r.Value) {
		f.t.Errorf("Get(%s) version %d: its value of %d bytes is not the one expected", name, r.Version, r.Value.Len())
	}
}
