package vaulttest

import (
	"errors"

	"github.com/arca-secrets/arca/vault"
)

// A group's history writes of one name are applied in turn, each against
// what the one before it left; a conflict is dropped alone.
func testGroupHistoryInTurn(f *fixture) {
	s, other, n := f.open(), f.open(), "app/key"
	f.clock.tick()
	f.put(s, n, "g1")
	t := f.clock.tick()
	g := f.group(s)
	defer g.Abort() // a failed step must not leave the vault held; a no-op after Commit
	steps := []struct {
		w     vault.Write
		v     uint64
		touch *vault.Touch
	}{
		{put(n, "g2"), 2, nil},
		{rollback(n, 1), 3, &vault.Touch{From: 1}},
		{ifVersion(rm(n), 3), 3, &vault.Touch{DeletedAt: t}},
		{undelete(n), 4, &vault.Touch{From: 3}},
		{destroy(n, 2), 4, &vault.Touch{Erased: []uint64{2}}},
	}
	for i, st := range steps {
		m, shown, err := f.groupAdd(g, st.w, nil)
		if err != nil {
			f.t.Fatalf("Add %d (%v): %v", i+1, st.w.Kind, err)
		}
		if m.Version != st.v || len(shown) != 1 {
			f.t.Errorf("Add %d (%v): version %d, approve shown %d; want %d, 1", i+1, st.w.Kind, m.Version, len(shown), st.v)
		}
		if d := diffTouch(m.Touch, st.touch); d != "" {
			f.t.Errorf("Add %d (%v): touch %s", i+1, st.w.Kind, d)
		}
	}
	var ce *vault.ConflictError
	if _, shown, err := f.groupAdd(g, ifVersion(put(n, "late"), 3), nil); !errors.As(err, &ce) || ce.Current != 4 || len(shown) != 0 {
		f.t.Errorf("Add of a put whose if_version is behind the group: %v, approve shown %d; want a conflict at 4, unapproved", err, len(shown))
	}
	if r := f.get(other, n); r.Version != 1 {
		f.t.Errorf("before the commit, another handle reads version %d, want 1", r.Version)
	}
	if err := g.Commit(f.t.Context()); err != nil {
		f.t.Fatalf("Commit: %v", err)
	}
	f.wantChain(s, n, chainWant{current: kept{4, "g1"}, previous: []kept{{3, "g1"}, {1, "g1"}}, highest: 4})
}

// A batch of history writes of several names lands as Apply would make
// each; one whose if_version does not match fails the batch, unapproved.
func testBatchHistory(f *fixture) {
	s := f.open()
	f.clock.tick()
	for _, n := range []string{"app/a", "app/b", "app/c", "app/d"} {
		f.put(s, n, n+" 1")
		f.put(s, n, n+" 2")
	}
	f.remove(s, "app/b")
	t := f.clock.tick()
	ws := []vault.Write{rollback("app/a", 1), undelete("app/b"), destroy("app/c", 1), ifVersion(rm("app/d"), 2)}
	want := []struct {
		v     uint64
		touch *vault.Touch
	}{{3, &vault.Touch{From: 1}}, {3, &vault.Touch{From: 2}}, {2, &vault.Touch{Erased: []uint64{1}}}, {2, &vault.Touch{DeletedAt: t}}}

	conflict := append([]vault.Write{put("app/e", "e")}, ifVersion(rm("app/a"), 1))
	got, calls, err := f.applyBatch(s, conflict, nil)
	if !errors.As(err, new(*vault.ConflictError)) || len(got) != 0 || len(calls) != 0 {
		f.t.Errorf("batch with an if_version mismatch: %d landed, %d approve calls, err %v; want none, none, a conflict", len(got), len(calls), err)
	}
	f.wantNotFound(s, "app/e")

	got, _, err = f.applyBatch(s, ws, nil)
	if err != nil || len(got) != len(ws) {
		f.t.Fatalf("history batch: %d of %d landed, err %v", len(got), len(ws), err)
	}
	for i, m := range got {
		if m.Version != want[i].v {
			f.t.Errorf("history batch, write %d (%v): version %d, want %d", i+1, ws[i].Kind, m.Version, want[i].v)
		}
		if d := diffTouch(m.Touch, want[i].touch); d != "" {
			f.t.Errorf("history batch, write %d (%v): touch %s", i+1, ws[i].Kind, d)
		}
	}
	f.wantChain(s, "app/a", chainWant{current: kept{3, "app/a 1"}, previous: []kept{{2, "app/a 2"}, {1, "app/a 1"}}, highest: 3})
	f.wantChain(s, "app/b", chainWant{current: kept{3, "app/b 2"}, previous: []kept{{2, "app/b 2"}, {1, "app/b 1"}}, highest: 3})
	f.wantChain(s, "app/c", chainWant{current: kept{2, "app/c 2"}, highest: 2})
	f.wantChain(s, "app/d", chainWant{previous: []kept{{2, "app/d 2"}, {1, "app/d 1"}}, highest: 2, deletedAt: t})
}

// A history write whose approve refuses is not committed: the name is
// left as it was, whatever the kind.
func testApproveAbortsHistory(f *fixture) {
	s, n := f.open(), "app/key"
	for _, value := range []string{"a1", "a2", "a3"} {
		f.clock.tick()
		f.put(s, n, value)
	}
	f.clock.tick()
	for _, w := range []vault.Write{rollback(n, 1), destroy(n, 1), destroy(n), rm(n), ifVersion(put(n, "x"), 3)} {
		before := f.chain(s, n)
		_, shown, err := applyRecording(f.t.Context(), s, w, denied{})
		if !errors.Is(err, denied{}) || len(shown) != 1 {
			f.t.Errorf("%v with a refusing approve: err %v, approve shown %d; want the approve's error, once", w.Kind, err, len(shown))
		}
		if d := diffChain(f.chain(f.open(), n), before); d != "" {
			f.t.Errorf("%v refused by approve, yet the name changed: %s", w.Kind, d)
		}
	}
	f.remove(s, n)
	before := f.chain(s, n)
	if _, _, err := applyRecording(f.t.Context(), s, undelete(n), denied{}); !errors.Is(err, denied{}) {
		f.t.Errorf("undelete with a refusing approve: err %v, want the approve's error", err)
	}
	if d := diffChain(f.chain(f.open(), n), before); d != "" {
		f.t.Errorf("undelete refused by approve, yet the name changed: %s", d)
	}
}

// A rekey re-seals every name's chain: kept versions, soft deletes and
// highest versions read the same after it, and check finds them healthy.
func testRekeyKeepsHistory(f *fixture) {
	s := f.open()
	k, ok := s.(vault.Keyed)
	if !ok {
		f.t.Skip("the store is not a vault.Keyed")
	}
	f.clock.tick()
	for _, v := range []string{"a1", "a2", "a3"} {
		f.put(s, "app/a", v)
	}
	f.put(s, "app/b", "b1")
	f.put(s, "app/b", "b2")
	f.remove(s, "app/b")
	f.put(s, "app/c", "c1")
	if _, err := s.Apply(f.t.Context(), destroy("app/c"), approveAll); err != nil {
		f.t.Fatalf("destroy: %v", err)
	}
	before, err := s.Chains(f.t.Context())
	if err != nil {
		f.t.Fatalf("Chains: %v", err)
	}
	if _, err := k.Rekey(f.t.Context()); err != nil {
		f.t.Fatalf("Rekey: %v", err)
	}
	after, err := f.open().Chains(f.t.Context())
	if err != nil || len(after) != len(before) {
		f.t.Fatalf("Chains after a rekey: %d names, err %v; want %d", len(after), err, len(before))
	}
	for i := range after {
		if d := diffChain(after[i], before[i]); d != "" {
			f.t.Errorf("Chains[%d] after a rekey: %s", i, d)
		}
	}
	f.wantReport(f.open(), vault.Report{Records: 1, Versions: 4})
}
