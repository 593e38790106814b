package vaulttest

import (
	"errors"

	"github.com/arca-secrets/arca/vault"
)

// denied is what the suite's approve returns to refuse a change.
type denied struct{}

func (denied) Error() string { return "denied by the test's approve" }

// applyDenied applies w with an approve that refuses it. The refusal must
// come back from Apply, and approve must have been shown want exactly once.
func (f *fixture) applyDenied(s vault.Store, w vault.Write, want vault.Meta) {
	f.t.Helper()
	_, seen, err := applyRecording(f.t.Context(), s, w, denied{})
	if !errors.Is(err, denied{}) {
		f.t.Fatalf("Apply(%v) with a refusing approve: err %v, want the approve's error", w.Kind, err)
	}
	if len(seen) != 1 {
		f.t.Fatalf("Apply(%v): approve called %d times, want 1", w.Kind, len(seen))
	}
	if d := diffMeta(seen[0], want); d != "" {
		f.t.Errorf("Apply(%v): approve saw %s", w.Kind, d)
	}
}

func testApproveAbortsPutNew(f *fixture) {
	s := f.open()
	t0 := f.clock.tick()
	f.applyDenied(s, vault.Write{Kind: vault.Put, Name: "app/new", Value: secret("v")},
		vault.Meta{Name: "app/new", Version: 1, CreatedAt: t0, UpdatedAt: t0, Created: true})
	f.wantNotFound(s, "app/new")
	f.wantNotFound(f.open(), "app/new")
	f.wantList(s, nil)

	// The refused change left no trace: the next put still creates.
	t1 := f.clock.tick()
	got := f.put(s, "app/new", "v")
	want := vault.Meta{Name: "app/new", Version: 1, CreatedAt: t1, UpdatedAt: t1, Created: true}
	if d := diffMeta(got, want); d != "" {
		f.t.Errorf("put after a refused put: %s", d)
	}
}

func testApproveAbortsPutExisting(f *fixture) {
	s := f.open()
	t0 := f.clock.tick()
	before := f.put(s, "app/key", "old")
	t1 := f.clock.tick()
	f.applyDenied(s, vault.Write{Kind: vault.Put, Name: "app/key", Value: secret("new")},
		vault.Meta{Name: "app/key", Version: 2, CreatedAt: t0, UpdatedAt: t1})
	f.wantUnchanged(s, "app/key", "old", before)
}

func testApproveAbortsRotate(f *fixture) {
	s := f.open()
	t0 := f.clock.tick()
	before := f.put(s, "app/key", "old")
	t1 := f.clock.tick()
	f.applyDenied(s, vault.Write{Kind: vault.Rotate, Name: "app/key", Value: secret("new")},
		vault.Meta{Name: "app/key", Version: 2, CreatedAt: t0, UpdatedAt: t1, RotatedAt: t1})
	f.wantUnchanged(s, "app/key", "old", before)
}

func testApproveAbortsRemove(f *fixture) {
	s := f.open()
	t0 := f.clock.tick()
	f.put(s, "app/key", "old")
	t1 := f.clock.tick()
	before := f.rotate(s, "app/key", "rotated")
	f.clock.tick()
	f.applyDenied(s, vault.Write{Kind: vault.Remove, Name: "app/key"},
		vault.Meta{Name: "app/key", Version: 2, CreatedAt: t0, UpdatedAt: t1, RotatedAt: t1})
	f.wantUnchanged(s, "app/key", "rotated", before)
}

// wantUnchanged checks, through s and a fresh handle, that name still holds
// value with metadata before, and that the next put gives the next version.
func (f *fixture) wantUnchanged(s vault.Store, name, value string, before vault.Meta) {
	f.t.Helper()
	f.wantRecord(s, name, value, before)
	f.wantRecord(f.open(), name, value, before)
	f.wantList(s, []vault.Meta{before})
	if got := f.put(s, name, "after"); got.Version != before.Version+1 {
		f.t.Errorf("put after a refused change: version %d, want %d", got.Version, before.Version+1)
	}
}
