package vaulttest

import "github.com/arca-secrets/arca/vault"

// if_version makes a write conditional on the current version (0: none),
// checked before anything else: a mismatch is a *ConflictError naming the
// current version, and nothing is written.
func testIfVersion(h *hfix) {
	s, n := h.open(), "app/cas"
	h.clock.tick()
	h.wantVersion(s, ifVersion(put(n, "v1"), 0), 1, nil)
	h.wantRefused(s, ifVersion(put(n, "x"), 0), isConflict(1))
	h.wantRefused(s, ifVersion(put(n, "x"), 2), isConflict(1))
	h.wantVersion(s, ifVersion(put(n, "v2"), 1), 2, nil)

	h.clock.tick()
	h.wantRefused(s, ifVersion(rotate(n, "x"), 1), isConflict(2))
	h.wantVersion(s, ifVersion(rotate(n, "v3"), 2), 3, nil)

	// Checked before not_found.
	h.wantRefused(s, ifVersion(rotate("app/missing", "x"), 1), isConflict(0))
	h.wantRefused(s, ifVersion(rm("app/missing"), 1), isConflict(0))
	h.wantRefused(s, ifVersion(undelete("app/missing"), 1), isConflict(0))
	h.wantRefused(s, ifVersion(rollback("app/missing", 1), 1), isConflict(0))
	h.wantRefused(s, ifVersion(rotate("app/missing", "x"), 0), isNotFound())
	h.wantRefused(s, ifVersion(rm("app/missing"), 0), isNotFound())
	h.wantRefused(s, ifVersion(rollback(n, 99), 2), isConflict(3))
	h.wantRefused(s, ifVersion(rollback(n, 99), 3), isNotFound(99))
	h.wantRefused(s, ifVersion(undelete(n), 3), isNotFound())

	h.clock.tick()
	h.wantRefused(s, ifVersion(rollback(n, 1), 2), isConflict(3))
	h.wantVersion(s, ifVersion(rollback(n, 1), 3), 4, &vault.Touch{From: 1})
	h.wantRecordValue(s, n, "v1")

	t := h.clock.tick()
	h.wantRefused(s, ifVersion(rm(n), 3), isConflict(4))
	h.wantVersion(s, ifVersion(rm(n), 4), 4, &vault.Touch{DeletedAt: t})
	h.wantRefused(s, ifVersion(undelete(n), 4), isConflict(0))
	h.wantRefused(s, ifVersion(put(n, "x"), 4), isConflict(0))
	h.clock.tick()
	h.wantVersion(s, ifVersion(undelete(n), 0), 5, &vault.Touch{From: 4})
	h.wantRecordValue(s, n, "v1")

	t = h.clock.tick()
	h.wantVersion(s, ifVersion(rm(n), 5), 5, &vault.Touch{DeletedAt: t})
	h.clock.tick()
	m := h.wantVersion(s, ifVersion(put(n, "v6"), 0), 6, nil)
	if !m.Created {
		h.t.Errorf("put with if_version 0 over a soft-deleted name: not Created")
	}
	h.clock.tick()
	h.wantRefused(s, ifVersion(destroy(n), 5), isConflict(6))
	h.must(s, destroy(n))
	h.wantRefused(s, ifVersion(put(n, "x"), 6), isConflict(0))
	h.wantVersion(s, ifVersion(put(n, "v7"), 0), 7, nil)
	h.wantChain(s, n, chainWant{current: kept{7, "v7"}, highest: 7})
}
