package vaulttest

import (
	"errors"

	"github.com/arca-secrets/arca/vault"
)

// groupAdd adds w to g with an approve that records what it was shown and
// refuses with deny (when not nil).
func (f *fixture) groupAdd(g vault.Group, w vault.Write, deny error) (vault.Meta, []vault.Meta, error) {
	f.t.Helper()
	var shown []vault.Meta
	m, err := g.Add(f.t.Context(), w, func(m vault.Meta) error {
		shown = append(shown, m)
		return deny
	})
	return m, shown, err
}

func (f *fixture) group(s vault.Store) vault.Group {
	f.t.Helper()
	g, err := s.Group(f.t.Context())
	if err != nil {
		f.t.Fatalf("Group: %v", err)
	}
	return g
}

// A group's writes are each prepared against what the earlier ones left,
// approved one by one, seen by nobody before the commit, and all there
// after it.
func testGroupLands(f *fixture) {
	s, other := f.open(), f.open()
	t0 := f.clock.tick()
	f.put(s, "app/old", "old")
	f.put(s, "app/gone", "gone")
	t1 := f.clock.tick()
	g := f.group(s)
	steps := []struct {
		w    vault.Write
		want vault.Meta
	}{
		{vault.Write{Kind: vault.Put, Name: "app/new", Value: secret("v1")},
			vault.Meta{Name: "app/new", Version: 1, CreatedAt: t1, UpdatedAt: t1, Created: true}},
		{vault.Write{Kind: vault.Rotate, Name: "app/new", Value: secret("v2")},
			vault.Meta{Name: "app/new", Version: 2, CreatedAt: t1, UpdatedAt: t1, RotatedAt: t1}},
		{vault.Write{Kind: vault.Put, Name: "app/old", Value: secret("old2")},
			vault.Meta{Name: "app/old", Version: 2, CreatedAt: t0, UpdatedAt: t1}},
		{vault.Write{Kind: vault.Remove, Name: "app/gone"},
			vault.Meta{Name: "app/gone", Version: 1, CreatedAt: t0, UpdatedAt: t0}},
		{vault.Write{Kind: vault.Put, Name: "app/gone", Value: secret("back")},
			vault.Meta{Name: "app/gone", Version: 2, CreatedAt: t0, UpdatedAt: t1, Created: true}},
	}
	for i, st := range steps {
		m, shown, err := f.groupAdd(g, st.w, nil)
		if err != nil {
			f.t.Fatalf("Add %d: %v", i+1, err)
		}
		f.wantMetas("Add", []vault.Meta{m}, []vault.Meta{st.want})
		f.wantMetas("approve", shown, []vault.Meta{st.want})
	}
	if err := g.Commit(f.t.Context()); err != nil {
		f.t.Fatalf("Commit: %v", err)
	}
	for _, h := range []vault.Store{s, other, f.open()} {
		f.wantRecord(h, "app/new", "v2", steps[1].want)
		f.wantRecord(h, "app/old", "old2", steps[2].want)
		f.wantRecord(h, "app/gone", "back", steps[4].want)
		f.wantCount(h, 3)
	}
}

// A write that cannot be prepared, or whose approve refuses, is dropped
// alone: the writes around it land, and it changes nothing.
func testGroupDropsAlone(f *fixture) {
	s := f.open()
	t0 := f.clock.tick()
	f.put(s, "app/kept", "old")
	t1 := f.clock.tick()
	g := f.group(s)
	if _, err := g.Add(f.t.Context(), vault.Write{Kind: vault.Put, Name: "app/a", Value: secret("a")}, func(vault.Meta) error { return nil }); err != nil {
		f.t.Fatalf("Add: %v", err)
	}
	if _, shown, err := f.groupAdd(g, vault.Write{Kind: vault.Rotate, Name: "app/missing", Value: secret("x")}, nil); !errors.Is(err, vault.ErrNotFound) || len(shown) != 0 {
		f.t.Errorf("rotate of a missing record: %v, approve shown %d, want ErrNotFound unapproved", err, len(shown))
	}
	if _, shown, err := f.groupAdd(g, vault.Write{Kind: vault.Remove, Name: "app/missing"}, nil); !errors.Is(err, vault.ErrNotFound) || len(shown) != 0 {
		f.t.Errorf("rm of a missing record: %v, approve shown %d, want ErrNotFound unapproved", err, len(shown))
	}
	if _, shown, err := f.groupAdd(g, vault.Write{Kind: 99, Name: "app/odd"}, nil); err == nil || len(shown) != 0 {
		f.t.Errorf("unknown kind: %v, approve shown %d, want an error unapproved", err, len(shown))
	}
	refused := errors.New("refused by the test")
	_, shown, err := f.groupAdd(g, vault.Write{Kind: vault.Put, Name: "app/kept", Value: secret("new")}, refused)
	if !errors.Is(err, refused) {
		f.t.Errorf("refused approve: Add returned %v, want the approve's error", err)
	}
	f.wantMetas("refused approve", shown, []vault.Meta{{Name: "app/kept", Version: 2, CreatedAt: t0, UpdatedAt: t1}})
	// A write after the refused one finds the record as it was.
	m, _, err := f.groupAdd(g, vault.Write{Kind: vault.Rotate, Name: "app/kept", Value: secret("rotated")}, nil)
	if err != nil {
		f.t.Fatalf("rotate after a refused put: %v", err)
	}
	want := vault.Meta{Name: "app/kept", Version: 2, CreatedAt: t0, UpdatedAt: t1, RotatedAt: t1}
	f.wantMetas("rotate after a refused put", []vault.Meta{m}, []vault.Meta{want})
	if err := g.Commit(f.t.Context()); err != nil {
		f.t.Fatalf("Commit: %v", err)
	}
	fresh := f.open()
	f.wantRecord(fresh, "app/kept", "rotated", want)
	f.wantRecord(fresh, "app/a", "a", vault.Meta{Name: "app/a", Version: 1, CreatedAt: t1, UpdatedAt: t1})
	f.wantNotFound(fresh, "app/missing")
	f.wantNotFound(fresh, "app/odd")
	f.wantCount(fresh, 2)
}

// An aborted group changes nothing, and the vault takes writes after it.
func testGroupAbort(f *fixture) {
	s := f.open()
	before := f.put(s, "app/key", "old")
	f.clock.tick()
	g := f.group(s)
	for _, w := range []vault.Write{
		{Kind: vault.Put, Name: "app/key", Value: secret("new")},
		{Kind: vault.Put, Name: "app/other", Value: secret("x")},
	} {
		if _, _, err := f.groupAdd(g, w, nil); err != nil {
			f.t.Fatalf("Add: %v", err)
		}
	}
	g.Abort()
	if _, err := g.Add(f.t.Context(), vault.Write{Kind: vault.Put, Name: "app/late", Value: secret("x")}, func(vault.Meta) error {
		f.t.Error("approve called on an ended group")
		return nil
	}); err == nil {
		f.t.Error("Add on an aborted group succeeded")
	}
	f.wantNotFound(s, "app/other")
	f.wantUnchanged(s, "app/key", "old", before)
}

// An empty group commits nothing and ends; a committed group takes no
// more writes.
func testGroupEnds(f *fixture) {
	s := f.open()
	if err := f.group(s).Commit(f.t.Context()); err != nil {
		f.t.Fatalf("Commit of an empty group: %v", err)
	}
	g := f.group(s)
	if _, _, err := f.groupAdd(g, vault.Write{Kind: vault.Put, Name: "app/a", Value: secret("a")}, nil); err != nil {
		f.t.Fatal(err)
	}
	if err := g.Commit(f.t.Context()); err != nil {
		f.t.Fatal(err)
	}
	if err := g.Commit(f.t.Context()); err == nil {
		f.t.Error("a second Commit of one group succeeded")
	}
	if _, shown, err := f.groupAdd(g, vault.Write{Kind: vault.Put, Name: "app/b", Value: secret("b")}, nil); err == nil || len(shown) != 0 {
		f.t.Errorf("Add after Commit: %v, approve shown %d", err, len(shown))
	}
	f.wantCount(f.open(), 1)
	f.put(s, "app/c", "c") // the group let go of the vault
	f.wantCount(f.open(), 2)
}
