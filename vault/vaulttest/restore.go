package vaulttest

import (
	"errors"
	"slices"
	"time"

	"github.com/arca-secrets/arca/vault"
)

// rec is a record a backup holds, for the restore cases.
func rec(v uint64, value string, created, updated, rotated time.Time) vault.Record {
	return vault.Record{Meta: vault.Meta{Version: v, CreatedAt: created, UpdatedAt: updated, RotatedAt: rotated}, Value: secret(value)}
}

func restoreChain(name string, c vault.Chain) vault.Write {
	return vault.Write{Kind: vault.Restore, Name: name, Chain: &c}
}

// A restore into a vault that holds nothing of the name keeps its numbers,
// times, kept versions and soft delete.
func testRestoreChain(h *hfix) {
	s, n := h.open(), "app/restored"
	ta, tb, tc := h.clock.tick(), h.clock.tick(), h.clock.tick()
	h.clock.tick()
	backup := vault.Chain{
		Current:    rec(7, "r7", ta, tc, tb),
		HasCurrent: true,
		Previous:   []vault.Record{rec(5, "r5", ta, tb, tb), rec(2, "r2", ta, ta, time.Time{})},
		Highest:    9,
	}
	h.wantWrite(s, restoreChain(n, backup), vault.Meta{Name: n, Version: 7, CreatedAt: ta, UpdatedAt: tc, RotatedAt: tb, Created: true}, nil)
	h.wantChain(s, n, chainWant{current: kept{7, "r7"}, previous: []kept{{5, "r5"}, {2, "r2"}}, highest: 9})
	if c := h.chain(s, n); len(c.Previous) == 2 {
		if d := diffMeta(c.Previous[0].Meta, vault.Meta{Name: n, Version: 5, CreatedAt: ta, UpdatedAt: tb, RotatedAt: tb}); d != "" {
			h.t.Errorf("restored version 5: %s", d)
		}
	}
	t := h.clock.tick()
	h.wantWrite(s, put(n, "r10"), vault.Meta{Name: n, Version: 10, CreatedAt: ta, UpdatedAt: t, RotatedAt: tb}, nil)

	g, td := "app/gone", h.clock.tick()
	gone := vault.Chain{Previous: []vault.Record{rec(3, "g3", ta, tb, time.Time{}), rec(1, "g1", ta, ta, time.Time{})}, Highest: 3, DeletedAt: td}
	h.wantWrite(s, restoreChain(g, gone), vault.Meta{Name: g, Version: 3, CreatedAt: ta, UpdatedAt: tb, Created: true}, nil)
	h.wantChain(s, g, chainWant{previous: []kept{{3, "g3"}, {1, "g1"}}, highest: 3, deletedAt: td})
	h.wantDeleted(s, []vault.Meta{{Name: g, Version: 3, CreatedAt: ta, UpdatedAt: tb, Touch: &vault.Touch{DeletedAt: td}}})
	h.clock.tick()
	h.wantVersion(s, undelete(g), 4, &vault.Touch{From: 3})
	h.wantRecordValue(s, g, "g3")

	h.wantRefused(s, restoreChain("app/bad", vault.Chain{}), func(err error) string {
		if err == nil {
			return "a restore of a chain with no version succeeded"
		}
		return ""
	})
}

// A restore into a name the vault holds never lowers a version: an older
// current value is written as a new version; a newer backup's versions
// above the vault's come first.
func testRestoreNeverLowers(h *hfix) {
	s, n := h.open(), "app/held"
	t1 := h.clock.tick()
	for _, value := range []string{"h1", "h2", "h3"} {
		h.must(s, put(n, value))
	}
	ta := h.clock.tick()
	t := h.clock.tick()
	older := vault.Write{Kind: vault.Restore, Name: n, Value: secret("old"), Meta: vault.Meta{Version: 2, CreatedAt: ta, UpdatedAt: ta}}
	h.wantWrite(s, older, vault.Meta{Name: n, Version: 4, CreatedAt: t1, UpdatedAt: t}, nil)
	h.wantChain(s, n, chainWant{current: kept{4, "old"}, previous: []kept{{3, "h3"}, {2, "h2"}, {1, "h1"}}, highest: 4})
	h.clock.tick()
	h.wantVersion(s, restoreChain(n, vault.Chain{Current: rec(3, "b3", ta, ta, time.Time{}), HasCurrent: true}), 5, nil)
	h.wantRecordValue(s, n, "b3")

	tb := h.clock.tick()
	newer := vault.Chain{
		Current:    rec(7, "b7", ta, tb, time.Time{}),
		HasCurrent: true,
		Previous:   []vault.Record{rec(6, "b6", ta, tb, time.Time{}), rec(5, "b5", ta, ta, time.Time{}), rec(2, "b2", ta, ta, time.Time{})},
	}
	h.clock.tick()
	h.wantWrite(s, restoreChain(n, newer), vault.Meta{Name: n, Version: 7, CreatedAt: ta, UpdatedAt: tb}, nil)
	h.wantChain(s, n, chainWant{
		current:  kept{7, "b7"},
		previous: []kept{{6, "b6"}, {5, "b3"}, {4, "old"}, {3, "h3"}, {2, "h2"}, {1, "h1"}},
		highest:  7,
	})

	// Nor over a name soft-deleted, or one with nothing kept but its
	// highest version.
	h.must(s, put("app/deleted", "d1"))
	h.must(s, rm("app/deleted"))
	h.must(s, put("app/erased", "e1"))
	h.must(s, put("app/erased", "e2"))
	h.must(s, destroy("app/erased"))
	t = h.clock.tick()
	one := vault.Meta{Version: 1, CreatedAt: ta, UpdatedAt: ta}
	m := h.wantVersion(s, vault.Write{Kind: vault.Restore, Name: "app/deleted", Value: secret("rd"), Meta: one}, 2, nil)
	if !m.Created || !m.UpdatedAt.Equal(t) {
		h.t.Errorf("restore over a soft-deleted name: created %t, updated_at %s; want created, now", m.Created, m.UpdatedAt)
	}
	h.wantChain(s, "app/deleted", chainWant{current: kept{2, "rd"}, previous: []kept{{1, "d1"}}, highest: 2})
	h.wantWrite(s, vault.Write{Kind: vault.Restore, Name: "app/erased", Value: secret("re"), Meta: one},
		vault.Meta{Name: "app/erased", Version: 3, CreatedAt: t, UpdatedAt: t, Created: true}, nil)
	h.wantChain(s, "app/erased", chainWant{current: kept{3, "re"}, highest: 3})
}

// Chains holds every name the vault knows, erased ones too, with what
// Chain says of each; Records, List and ListDeleted only what they show.
func testChains(h *hfix) {
	s := h.open()
	h.clock.tick()
	h.must(s, put("a/live", "l1"))
	live := h.must(s, put("a/live", "l2"))
	h.must(s, put("b/deleted", "d1"))
	h.must(s, put("c/destroyed", "x1"))
	h.must(s, put("d/erased", "e1"))
	t := h.clock.tick()
	h.must(s, rm("b/deleted"))
	h.must(s, destroy("c/destroyed"))
	h.must(h.openWith(vault.History{MaxVersions: 3}), rm("d/erased"))

	chains, err := h.open().Chains(h.t.Context())
	if err != nil {
		h.t.Fatalf("Chains: %v", err)
	}
	want := []string{"a/live", "b/deleted", "c/destroyed", "d/erased"}
	var got []string
	for _, c := range chains {
		got = append(got, c.Name)
	}
	if !slices.Equal(got, want) {
		h.t.Fatalf("Chains: names %v, want %v", got, want)
	}
	for _, c := range chains {
		if d := diffChain(c, h.chain(s, c.Name)); d != "" {
			h.t.Errorf("Chains[%s] differs from Chain: %s", c.Name, d)
		}
	}
	h.wantChain(s, "b/deleted", chainWant{previous: []kept{{1, "d1"}}, highest: 1, deletedAt: t})
	h.wantKnownOnly(s, "c/destroyed", 1)
	h.wantKnownOnly(s, "d/erased", 1)
	h.wantRecords(h.open(), map[string]string{"a/live": "l2"}, []vault.Meta{live})
	h.wantList(s, []vault.Meta{live})
	h.wantDeleted(s, []vault.Meta{h.deletedMeta(s, "b/deleted", t)})
	if _, err := s.Chain(h.t.Context(), "e/never"); !errors.Is(err, vault.ErrNotFound) {
		h.t.Errorf("Chain of a name never written: %v, want ErrNotFound", err)
	}
}
