package vaulttest

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/arca-secrets/arca/vault"
)

// batchCall is what one call of a batch's approve was shown.
type batchCall []vault.Meta

// applyBatch applies ws with an approve that records what it is shown and
// runs hook (when not nil) on each call: hook's error refuses the unit. It
// returns what approve was shown of the writes that landed, and fails the
// test when the store says more landed than approve was shown.
func (f *fixture) applyBatch(s vault.Store, ws []vault.Write, hook func(call int, ms []vault.Meta) error) ([]vault.Meta, []batchCall, error) {
	f.t.Helper()
	var calls []batchCall
	n, err := s.ApplyBatch(f.t.Context(), vault.Writes(ws), func(ms []vault.Meta) error {
		calls = append(calls, slices.Clone(ms))
		if hook != nil {
			return hook(len(calls), ms)
		}
		return nil
	})
	shown := flat(calls)
	if n < 0 || n > len(shown) || n > len(ws) {
		f.t.Fatalf("ApplyBatch says %d of %d writes landed; approve was shown %d", n, len(ws), len(shown))
	}
	return shown[:n], calls, err
}

// flat is every meta approve was shown, in order.
func flat(calls []batchCall) []vault.Meta {
	var all []vault.Meta
	for _, c := range calls {
		all = append(all, c...)
	}
	return all
}

func puts(prefix string, n int) []vault.Write {
	ws := make([]vault.Write, n)
	for i := range ws {
		name := fmt.Sprintf("%s/rec-%04d", prefix, i)
		ws[i] = vault.Write{Kind: vault.Put, Name: name, Value: secret("value of " + name)}
	}
	return ws
}

// A batch of every kind of write: approved in order before anything of it
// is visible, then landed whole, each write as Apply would make it.
func testBatchLands(f *fixture) {
	s, other := f.open(), f.open()
	t0 := f.clock.tick()
	f.put(s, "app/kept", "old")
	f.put(s, "app/rotated", "old")
	f.put(s, "app/removed", "old")
	t1 := f.clock.tick()
	ws := []vault.Write{
		{Kind: vault.Put, Name: "app/new", Value: secret("new value")},
		{Kind: vault.Put, Name: "app/kept", Value: secret("overwritten")},
		{Kind: vault.Rotate, Name: "app/rotated", Value: secret("rotated")},
		{Kind: vault.Remove, Name: "app/removed"},
	}
	want := []vault.Meta{
		{Name: "app/new", Version: 1, CreatedAt: t1, UpdatedAt: t1, Created: true},
		{Name: "app/kept", Version: 2, CreatedAt: t0, UpdatedAt: t1},
		{Name: "app/rotated", Version: 2, CreatedAt: t0, UpdatedAt: t1, RotatedAt: t1},
		{Name: "app/removed", Version: 1, CreatedAt: t0, UpdatedAt: t0},
	}
	got, calls, err := f.applyBatch(s, ws, func(int, []vault.Meta) error {
		// Approved, not yet committed: nothing of the unit shows.
		f.wantNotFound(other, "app/new")
		if r := f.get(other, "app/removed"); string(r.Value.Reveal()) != "old" {
			f.t.Errorf("app/removed changed before its batch was committed")
		}
		return nil
	})
	if err != nil {
		f.t.Fatalf("ApplyBatch: %v", err)
	}
	f.wantMetas("ApplyBatch returned", got, want)
	f.wantMetas("approve was shown", flat(calls), want)
	for _, h := range []vault.Store{s, other, f.open()} {
		f.wantRecord(h, "app/new", "new value", want[0])
		f.wantRecord(h, "app/kept", "overwritten", want[1])
		f.wantRecord(h, "app/rotated", "rotated", want[2])
		f.wantNotFound(h, "app/removed")
	}
	f.wantList(s, []vault.Meta{want[1], want[0], want[2]})
	f.wantRecords(f.open(), map[string]string{"app/kept": "overwritten", "app/new": "new value", "app/rotated": "rotated"}, []vault.Meta{want[1], want[0], want[2]})

	none, calls, err := f.applyBatch(s, nil, nil)
	if err != nil || len(none) != 0 || len(calls) != 0 {
		f.t.Errorf("empty batch: %d metas, %d approve calls, err %v; want none and nil", len(none), len(calls), err)
	}
}

// A refused approve, a write that cannot be prepared, a record named twice:
// nothing of the batch lands.
func testBatchRefusals(f *fixture) {
	s := f.open()
	before := f.put(s, "app/kept", "old")
	f.clock.tick()
	ws := []vault.Write{
		{Kind: vault.Put, Name: "app/new", Value: secret("new")},
		{Kind: vault.Put, Name: "app/kept", Value: secret("new")},
	}
	got, calls, err := f.applyBatch(s, ws, func(int, []vault.Meta) error { return denied{} })
	if !errors.Is(err, denied{}) || len(got) != 0 || len(calls) != 1 {
		f.t.Errorf("refused batch: %d landed, %d approve calls, err %v; want none, 1, the approve's error", len(got), len(calls), err)
	}
	missing := append(slices.Clone(ws), vault.Write{Kind: vault.Rotate, Name: "app/missing", Value: secret("x")})
	if got, calls, err = f.applyBatch(s, missing, nil); !errors.Is(err, vault.ErrNotFound) || len(got) != 0 || len(calls) != 0 {
		f.t.Errorf("batch rotating a missing record: %d landed, %d approve calls, err %v; want none, none, ErrNotFound", len(got), len(calls), err)
	}
	twice := append(slices.Clone(ws), vault.Write{Kind: vault.Remove, Name: "app/kept"})
	got, calls, err = f.applyBatch(s, twice, nil)
	if err == nil || len(got) != 0 || len(calls) != 0 {
		f.t.Errorf("batch naming a record twice: %d landed, %d approve calls, err %v; want none, none, an error", len(got), len(calls), err)
	} else if strings.Contains(err.Error(), "app/kept") {
		f.t.Errorf("batch naming a record twice: the error names it: %v", err)
	}
	f.wantNotFound(s, "app/new")
	f.wantUnchanged(s, "app/kept", "old", before)
}

// A restore gives a record the version and times it is written with, to
// the nanosecond and in UTC, when the vault holds nothing of it; over a
// record whose version is not below the restored one, it never lowers the
// version: the value is written as a new version, now.
func testBatchRestore(f *fixture) {
	s := f.open()
	existing := f.put(s, "app/existing", "current")
	f.put(s, "app/existing", "current again")
	t0, t1, t2 := f.clock.tick(), f.clock.tick(), f.clock.tick()
	t3 := f.clock.tick()
	ws := []vault.Write{
		{Kind: vault.Restore, Name: "app/existing", Value: secret("restored"), Meta: vault.Meta{Version: 1, CreatedAt: t0, UpdatedAt: t0}},
		{Kind: vault.Restore, Name: "app/new", Value: secret("restored new"), Meta: vault.Meta{Version: 7, CreatedAt: t0, UpdatedAt: t2, RotatedAt: t1}},
	}
	want := []vault.Meta{
		{Name: "app/existing", Version: 3, CreatedAt: existing.CreatedAt, UpdatedAt: t3.UTC()},
		{Name: "app/new", Version: 7, CreatedAt: t0.UTC(), UpdatedAt: t2.UTC(), RotatedAt: t1.UTC(), Created: true},
	}
	got, calls, err := f.applyBatch(s, ws, nil)
	if err != nil {
		f.t.Fatalf("restore batch: %v", err)
	}
	f.wantMetas("restore returned", got, want)
	f.wantMetas("restore approved", flat(calls), want)
	f.wantRecord(f.open(), "app/existing", "restored", want[0])
	f.wantRecord(f.open(), "app/new", "restored new", want[1])
	one := f.apply(s, vault.Write{Kind: vault.Restore, Name: "app/single", Value: secret("one"), Meta: vault.Meta{Version: 3, CreatedAt: t0, UpdatedAt: t1}})
	f.wantMetas("single restore", []vault.Meta{one}, []vault.Meta{{Name: "app/single", Version: 3, CreatedAt: t0.UTC(), UpdatedAt: t1.UTC(), Created: true}})
	bad := vault.Write{Kind: vault.Restore, Name: "app/bad", Value: secret("x"), Meta: vault.Meta{CreatedAt: t0, UpdatedAt: t0}}
	if _, calls, err := f.applyBatch(s, []vault.Write{bad}, nil); err == nil || len(calls) != 0 {
		f.t.Errorf("restore without a version: %d approve calls, err %v; want none and an error", len(calls), err)
	}
	f.wantNotFound(s, "app/bad")
}

// A batch big enough for any backend to split into units. Units land in
// order, each whole: when a write to a record of the second unit lands
// between its approve and its commit, that unit fails, the first stays
// landed, and the concurrent write is not lost. A backend that commits
// the batch as one unit lands it whole.
func testBatchFailsPartWay(f *fixture) {
	s, other := f.open(), f.open()
	ws := puts("bulk", 1000)
	var intruder string
	got, calls, err := f.applyBatch(s, ws, func(call int, ms []vault.Meta) error {
		if call == 2 {
			intruder = ms[len(ms)-1].Name
			f.put(other, intruder, "written concurrently")
		}
		return nil
	})
	if len(calls) == 1 {
		if err != nil || len(got) != len(ws) {
			f.t.Fatalf("one-unit batch: %d of %d landed, err %v", len(got), len(ws), err)
		}
		f.wantCount(f.open(), len(ws))
		return
	}
	if err == nil || len(calls) != 2 {
		f.t.Fatalf("batch whose second unit met a concurrent write: %d approve calls, err %v; want 2 and an error", len(calls), err)
	}
	f.wantMetas("a batch failed part-way returned", got, calls[0])
	fresh := f.open()
	for i, w := range ws {
		switch r, gerr := fresh.Get(f.t.Context(), w.Name); {
		case w.Name == intruder:
			if gerr != nil || string(r.Value.Reveal()) != "written concurrently" {
				f.t.Errorf("the concurrent write to %s was lost (err %v)", w.Name, gerr)
			}
		case i < len(got) && (gerr != nil || !r.Value.Equal(w.Value)):
			f.t.Errorf("%s of the landed unit: err %v", w.Name, gerr)
		case i >= len(got) && !errors.Is(gerr, vault.ErrNotFound):
			f.t.Errorf("%s of the failed unit: err %v, want ErrNotFound", w.Name, gerr)
		}
	}
	f.wantCount(fresh, len(got)+1)
}

func (f *fixture) wantCount(s vault.Store, n int) {
	f.t.Helper()
	if ms := f.list(s); len(ms) != n {
		f.t.Errorf("list: %d records, want %d", len(ms), n)
	}
}

func (f *fixture) wantMetas(what string, got, want []vault.Meta) {
	f.t.Helper()
	if len(got) != len(want) {
		f.t.Fatalf("%s %d metas, want %d", what, len(got), len(want))
	}
	for i := range got {
		if d := diffMeta(got[i], want[i]); d != "" {
			f.t.Errorf("%s, write %d: %s", what, i+1, d)
		}
	}
}

// wantRecords checks that Records gives exactly the records of want, in
// order, with the values of values.
func (f *fixture) wantRecords(s vault.Store, values map[string]string, want []vault.Meta) {
	f.t.Helper()
	recs, err := s.Records(f.t.Context())
	if err != nil {
		f.t.Fatalf("Records: %v", err)
	}
	if recs == nil || len(recs) != len(want) {
		f.t.Fatalf("Records: %d records (nil: %t), want %d", len(recs), recs == nil, len(want))
	}
	for i, r := range recs {
		w := want[i]
		w.Created = false
		if d := diffRead(r.Meta, w); d != "" {
			f.t.Errorf("Records[%d]: %s", i, d)
		}
		if !r.Value.Equal(secret(values[r.Name])) {
			f.t.Errorf("Records[%d]: the value of %s differs from the one stored", i, r.Name)
		}
	}
}
