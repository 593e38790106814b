package vaulttest

import (
	"errors"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/arca-secrets/arca/vault"
)

func testPutCreates(f *fixture) {
	s := f.open()
	t0 := f.clock.tick()
	got := f.put(s, "app/db-password", "hunter2")
	want := vault.Meta{Name: "app/db-password", Version: 1, CreatedAt: t0, UpdatedAt: t0, Created: true}
	if d := diffMeta(got, want); d != "" {
		f.t.Errorf("put: %s", d)
	}
	f.wantRecord(s, "app/db-password", "hunter2", want)
}

func testPutAgain(f *fixture) {
	s := f.open()
	t0 := f.clock.tick()
	f.put(s, "app/token", "first")
	t1 := f.clock.tick()
	got := f.put(s, "app/token", "second, and longer than the first")
	want := vault.Meta{Name: "app/token", Version: 2, CreatedAt: t0, UpdatedAt: t1}
	if d := diffMeta(got, want); d != "" {
		f.t.Errorf("second put: %s", d)
	}
	f.wantRecord(s, "app/token", "second, and longer than the first", want)

	t2 := f.clock.tick()
	got = f.put(s, "app/token", "3")
	want = vault.Meta{Name: "app/token", Version: 3, CreatedAt: t0, UpdatedAt: t2}
	if d := diffMeta(got, want); d != "" {
		f.t.Errorf("third put: %s", d)
	}
	f.wantRecord(f.open(), "app/token", "3", want)
}

// exactValues are values that must come back byte for byte.
func exactValues() map[string]string {
	var allBytes, big strings.Builder
	for b := range 256 {
		allBytes.WriteByte(byte(b))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for big.Len() < 64<<10 {
		big.WriteByte(byte(rng.IntN(256)))
	}
	return map[string]string{
		"empty":      "",
		"one-byte":   "x",
		"utf8":       "é世界😀\u200b\ufeff\u202e—ünïcödé",
		"nul-and-nl": "a\x00b\x00\nc\r\nd\n\x00",
		"json-ish":   `{"value":"a\"b\\c","records":{}}` + "\n}}\n",
		"all-bytes":  allBytes.String(),
		"64KiB":      big.String(),
	}
}

func testGetExact(f *fixture) {
	s := f.open()
	values := exactValues()
	metas := map[string]vault.Meta{}
	for label, v := range values {
		f.clock.tick()
		metas[label] = f.put(s, "exact/"+label, v)
	}
	other := f.open()
	for label, v := range values {
		f.wantRecord(s, "exact/"+label, v, metas[label])
		f.wantRecord(other, "exact/"+label, v, metas[label])
	}
	// Overwriting with shorter values leaves nothing of the longer ones.
	for label := range values {
		metas[label] = f.put(s, "exact/"+label, "")
	}
	for label := range values {
		f.wantRecord(other, "exact/"+label, "", metas[label])
	}
}

func testGetMissing(f *fixture) {
	s := f.open()
	f.wantNotFound(s, "app/missing")
	f.put(s, "app/present", "v")
	f.wantNotFound(s, "app/missing")
	f.wantNotFound(s, "App/present")
	f.wantNotFound(s, "app/present2")
	f.wantNotFound(s, "app/presen")
	f.wantNotFound(s, "other/present")
}

func testRotateMissing(f *fixture) {
	s := f.open()
	f.clock.tick()
	kept := f.put(s, "app/other", "kept")
	for _, name := range []string{"app/missing", "App/other"} {
		_, approved, err := applyRecording(f.t.Context(), s, vault.Write{Kind: vault.Rotate, Name: name, Value: secret("new")}, nil)
		if !errors.Is(err, vault.ErrNotFound) {
			f.t.Fatalf("rotate %s: err %v, want ErrNotFound", name, err)
		}
		if len(approved) != 0 {
			f.t.Errorf("rotate %s: approve called for a missing record", name)
		}
		f.wantNotFound(s, name)
		f.wantNotFound(f.open(), name)
	}
	f.wantList(s, []vault.Meta{kept})
}

func testRotate(f *fixture) {
	s := f.open()
	t0 := f.clock.tick()
	f.put(s, "app/key", "v1")
	t1 := f.clock.tick()
	got := f.rotate(s, "app/key", "v2")
	want := vault.Meta{Name: "app/key", Version: 2, CreatedAt: t0, UpdatedAt: t1, RotatedAt: t1}
	if d := diffMeta(got, want); d != "" {
		f.t.Errorf("rotate: %s", d)
	}
	f.wantRecord(s, "app/key", "v2", want)

	// A put after a rotate keeps the earlier rotated_at.
	t2 := f.clock.tick()
	got = f.put(s, "app/key", "v3")
	want = vault.Meta{Name: "app/key", Version: 3, CreatedAt: t0, UpdatedAt: t2, RotatedAt: t1}
	if d := diffMeta(got, want); d != "" {
		f.t.Errorf("put after rotate: %s", d)
	}
	f.wantRecord(f.open(), "app/key", "v3", want)

	t3 := f.clock.tick()
	got = f.rotate(s, "app/key", "v4")
	want = vault.Meta{Name: "app/key", Version: 4, CreatedAt: t0, UpdatedAt: t3, RotatedAt: t3}
	if d := diffMeta(got, want); d != "" {
		f.t.Errorf("second rotate: %s", d)
	}
	f.wantRecord(f.open(), "app/key", "v4", want)
}

func testRemove(f *fixture) {
	s := f.open()
	t0 := f.clock.tick()
	f.put(s, "app/gone", "v1")
	t1 := f.clock.tick()
	f.rotate(s, "app/gone", "v2")
	f.clock.tick()
	kept := f.put(s, "app/kept", "k")
	f.clock.tick()
	got := f.remove(s, "app/gone")
	want := vault.Meta{Name: "app/gone", Version: 2, CreatedAt: t0, UpdatedAt: t1, RotatedAt: t1}
	if d := diffMeta(got, want); d != "" {
		f.t.Errorf("rm: %s", d)
	}
	f.wantNotFound(s, "app/gone")
	f.wantNotFound(f.open(), "app/gone")
	f.wantList(s, []vault.Meta{kept})

	_, approved, err := applyRecording(f.t.Context(), s, vault.Write{Kind: vault.Remove, Name: "app/gone"}, nil)
	if !errors.Is(err, vault.ErrNotFound) {
		f.t.Fatalf("second rm: err %v, want ErrNotFound", err)
	}
	if len(approved) != 0 {
		f.t.Errorf("second rm: approve called for a missing record")
	}
	f.wantList(s, []vault.Meta{kept})

	// A put after rm creates the record again and continues its
	// numbering; rm was a soft delete, so it keeps the removed version's
	// created and rotated times.
	t4 := f.clock.tick()
	got = f.put(s, "app/gone", "reborn")
	want = vault.Meta{Name: "app/gone", Version: 3, CreatedAt: t0, UpdatedAt: t4, RotatedAt: t1, Created: true}
	if d := diffMeta(got, want); d != "" {
		f.t.Errorf("put after rm: %s", d)
	}
	f.wantRecord(f.open(), "app/gone", "reborn", want)
}

func testListEmpty(f *fixture) {
	f.wantList(f.open(), nil)
	f.wantRecords(f.open(), nil, nil)
}

func testListSorted(f *fixture) {
	s := f.open()
	all := []string{"b/x", "a/z", "a/y", "B/x", "a/y-1", "a/y.1", "0/a", "a/Y", "a/y_", "ab/a", "a-b/a", "a.b/a", "z/" + strings.Repeat("n", 128)}
	rng := rand.New(rand.NewPCG(3, 4))
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	last := map[string]vault.Meta{}
	for i, name := range all {
		f.clock.tick()
		last[name] = f.put(s, name, "value-"+strconv.Itoa(i))
		if i%3 == 0 {
			f.clock.tick()
			last[name] = f.rotate(s, name, "rotated-"+strconv.Itoa(i))
		}
		if i%4 == 0 {
			f.clock.tick()
			last[name] = f.put(s, name, "again-"+strconv.Itoa(i))
		}
	}
	f.remove(s, all[5])
	delete(last, all[5])

	sorted := slices.Sorted(maps.Keys(last)) // byte order
	want := make([]vault.Meta, len(sorted))
	for i, name := range sorted {
		want[i] = last[name]
	}
	f.wantList(s, want)
	f.wantList(f.open(), want)
}

// testUnknownKind: a Write whose Kind is none of vault's is refused
// before approve, whether or not the record exists, and changes nothing.
func testUnknownKind(f *fixture) {
	s := f.open()
	f.clock.tick()
	before := f.put(s, "app/key", "v")
	for _, k := range []vault.Kind{0, vault.Destroy + 1} {
		for _, name := range []string{"app/key", "app/missing"} {
			_, seen, err := applyRecording(f.t.Context(), s, vault.Write{Kind: k, Name: name, Value: secret("x")}, nil)
			if err == nil || errors.Is(err, vault.ErrNotFound) {
				f.t.Errorf("Apply(kind %d, %s): err %v, want a refusal", k, name, err)
			}
			if len(seen) != 0 {
				f.t.Errorf("Apply(kind %d, %s) called approve", k, name)
			}
		}
	}
	f.wantNotFound(s, "app/missing")
	f.wantRecord(s, "app/key", "v", before)
}
