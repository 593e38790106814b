package vaulttest

import (
	"errors"
	"strings"

	"github.com/arca-secrets/arca/vault"
)

// The tampered record's name and value: neither may appear in any error or
// problem the backend reports about it.
const (
	tamperName  = "tamperns/canary-name-9b1c"
	tamperValue = "CANARY-VALUE-5e2d0a"
)

// testTamper: a record whose ciphertext changed is an error, never a value
// and never "not found"; Check reports it; it can be removed, not
// overwritten.
func testTamper(f *fixture) {
	a := f.open()
	f.put(a, tamperName, tamperValue)
	if err := f.h.Corrupt(); err != nil {
		f.t.Fatalf("Corrupt: %v", err)
	}
	b := f.open()
	for _, s := range []vault.Store{a, b} {
		f.wantTampered(s)
	}
	rep, err := b.Check(f.t.Context())
	if err != nil {
		f.t.Fatalf("Check: %v", err)
	}
	if len(rep.Problems) == 0 {
		f.t.Errorf("Check of a tampered vault reports no problem")
	}
	if rep.Records != 1 {
		f.t.Errorf("Check: %d records, want 1", rep.Records)
	}
	if l := leaks(strings.Join(rep.Problems, "\n"), tamperName, tamperValue); l != nil {
		f.t.Errorf("Check problems quote %q", l)
	}

	// The way out is rm, after which the vault is healthy again.
	if _, err := a.Apply(f.t.Context(), vault.Write{Kind: vault.Remove, Name: tamperName}, approveAll); err != nil {
		f.t.Fatalf("rm of the tampered record: %v", err)
	}
	f.wantNotFound(b, tamperName)
	f.wantHealthy(b, 0)
}

// wantTampered checks that every way to read or change the tampered record
// through s fails, quotes neither its name nor its value, and changes
// nothing.
func (f *fixture) wantTampered(s vault.Store) {
	f.t.Helper()
	ctx := f.t.Context()
	r, err := s.Get(ctx, tamperName)
	f.wantTamperErr("Get", err)
	if r.Value.Len() != 0 {
		f.t.Errorf("Get of a tampered record returned a value")
	}
	_, err = s.List(ctx)
	f.wantTamperErr("List", err)
	_, err = s.Records(ctx)
	f.wantTamperErr("Records", err)
	for _, k := range []vault.Kind{vault.Put, vault.Rotate, vault.Restore} {
		now := f.clock.now()
		w := vault.Write{Kind: k, Name: tamperName, Value: secret("replacement"), Meta: vault.Meta{Version: 9, CreatedAt: now, UpdatedAt: now}}
		_, seen, err := applyRecording(ctx, s, w, nil)
		f.wantTamperErr("Apply", err)
		if len(seen) != 0 {
			f.t.Errorf("Apply(%v) over a tampered record called approve", k)
		}
	}
	_, err = s.Get(ctx, tamperName)
	f.wantTamperErr("Get after refused writes", err)
}

func (f *fixture) wantTamperErr(op string, err error) {
	f.t.Helper()
	switch {
	case err == nil:
		f.t.Errorf("%s of a tampered record succeeded", op)
	case errors.Is(err, vault.ErrNotFound):
		f.t.Errorf("%s of a tampered record: %v, want an error other than ErrNotFound", op, err)
	default:
		if l := leaks(err.Error(), tamperName, tamperValue); l != nil {
			f.t.Errorf("%s error quotes %q", op, l)
		}
	}
}

// testCheckHealthy: a healthy vault reports no problem and the number of
// records it holds.
func testCheckHealthy(f *fixture) {
	s := f.open()
	f.wantHealthy(s, 0)
	for _, name := range []string{"a/1", "a/2", "b/1"} {
		f.clock.tick()
		f.put(s, name, "value of "+name)
	}
	f.rotate(s, "a/2", "rotated")
	f.remove(s, "a/1")
	f.wantHealthy(s, 2)
	f.wantHealthy(f.open(), 2)
}

func (f *fixture) wantHealthy(s vault.Store, records int) {
	f.t.Helper()
	rep, err := s.Check(f.t.Context())
	if err != nil {
		f.t.Fatalf("Check: %v", err)
	}
	if len(rep.Problems) != 0 {
		f.t.Errorf("Check of a healthy vault: problems %q", rep.Problems)
	}
	if rep.Records != records {
		f.t.Errorf("Check: %d records, want %d", rep.Records, records)
	}
}
