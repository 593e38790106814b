package vaulttest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/arca-secrets/arca/vault"
)

// kept is a version the suite expects a name to keep, with its value.
type kept struct {
	v     uint64
	value string
}

// chainWant is what the suite expects of a name's chain.
type chainWant struct {
	current   kept // version 0: no current record
	previous  []kept
	highest   uint64
	deletedAt time.Time
}

// chain returns name's chain through s, which must hold something of it.
func (f *fixture) chain(s vault.Store, name string) vault.Chain {
	f.t.Helper()
	c, err := s.Chain(f.t.Context(), name)
	if err != nil {
		f.t.Fatalf("Chain(%s): %v", name, err)
	}
	return c
}

// wantChain checks name's chain through s and a fresh handle, and that Get
// agrees with it.
func (f *fixture) wantChain(s vault.Store, name string, want chainWant) {
	f.t.Helper()
	for _, h := range []vault.Store{s, f.open()} {
		c := f.chain(h, name)
		if d := diffChainWant(c, name, want); d != "" {
			f.t.Errorf("Chain(%s): %s", name, d)
		}
		r, err := h.Get(f.t.Context(), name)
		switch {
		case !c.HasCurrent && !errors.Is(err, vault.ErrNotFound):
			f.t.Errorf("Get(%s) of a name with no current record: err %v, want ErrNotFound", name, err)
		case c.HasCurrent && err != nil:
			f.t.Errorf("Get(%s): %v", name, err)
		case c.HasCurrent:
			if d := diffMeta(r.Meta, c.Current.Meta); d != "" || !bytes.Equal(r.Value.Reveal(), c.Current.Value.Reveal()) {
				f.t.Errorf("Get(%s) differs from its chain's current record: %s (values equal: %t)", name, d, bytes.Equal(r.Value.Reveal(), c.Current.Value.Reveal()))
			}
		}
	}
}

// diffChainWant describes how c differs from want; values are compared,
// never printed.
func diffChainWant(c vault.Chain, name string, want chainWant) string {
	var d []string
	if c.Name != name {
		d = append(d, fmt.Sprintf("name %q, want %q", c.Name, name))
	}
	switch {
	case c.HasCurrent != (want.current.v != 0):
		d = append(d, fmt.Sprintf("has current %t (version %d), want version %d", c.HasCurrent, c.CurrentVersion(), want.current.v))
	case c.HasCurrent:
		d = append(d, diffKept("current", c.Current, want.current)...)
	}
	if got, w := versionsOf(c.Previous), keptVersions(want.previous); !slices.Equal(got, w) {
		d = append(d, fmt.Sprintf("previous versions %v, want %v", got, w))
	} else {
		for i, r := range c.Previous {
			d = append(d, diffKept("previous", r, want.previous[i])...)
		}
	}
	if c.Highest != want.highest {
		d = append(d, fmt.Sprintf("highest %d, want %d", c.Highest, want.highest))
	}
	d = append(d, diffTime("deleted_at", c.DeletedAt, want.deletedAt)...)
	return joinDiffs(d)
}

func diffKept(what string, r vault.Record, want kept) []string {
	var d []string
	if r.Version != want.v {
		d = append(d, fmt.Sprintf("%s version %d, want %d", what, r.Version, want.v))
	}
	if r.Created || r.Touch != nil {
		d = append(d, fmt.Sprintf("%s version %d: created %t, touch %t on what a read returns", what, r.Version, r.Created, r.Touch != nil))
	}
	if !bytes.Equal(r.Value.Reveal(), []byte(want.value)) {
		d = append(d, fmt.Sprintf("%s version %d: its value of %d bytes is not the one written", what, r.Version, r.Value.Len()))
	}
	for _, tm := range []struct {
		what string
		t    time.Time
	}{{"created_at", r.CreatedAt}, {"updated_at", r.UpdatedAt}, {"rotated_at", r.RotatedAt}} {
		if !tm.t.IsZero() && tm.t.Location() != time.UTC || tm.what != "rotated_at" && tm.t.IsZero() {
			d = append(d, fmt.Sprintf("%s version %d: %s %s, want a time in UTC", what, r.Version, tm.what, tm.t))
		}
	}
	return d
}

// diffChain describes how got differs from want, everything compared:
// what a refused write must leave as it found.
func diffChain(got, want vault.Chain) string {
	var d []string
	if got.Name != want.Name || got.HasCurrent != want.HasCurrent || got.Highest != want.Highest {
		d = append(d, fmt.Sprintf("name %q current %t highest %d, want %q %t %d", got.Name, got.HasCurrent, got.Highest, want.Name, want.HasCurrent, want.Highest))
	}
	if got.HasCurrent && want.HasCurrent {
		d = append(d, diffRecord("current", got.Current, want.Current)...)
	}
	if g, w := versionsOf(got.Previous), versionsOf(want.Previous); !slices.Equal(g, w) {
		d = append(d, fmt.Sprintf("previous versions %v, want %v", g, w))
	} else {
		for i := range got.Previous {
			d = append(d, diffRecord("previous", got.Previous[i], want.Previous[i])...)
		}
	}
	d = append(d, diffTime("deleted_at", got.DeletedAt, want.DeletedAt)...)
	d = append(d, diffTime("changed_at", got.ChangedAt, want.ChangedAt)...)
	return joinDiffs(d)
}

func diffRecord(what string, got, want vault.Record) []string {
	var d []string
	if m := diffMeta(got.Meta, want.Meta); m != "" {
		d = append(d, fmt.Sprintf("%s version %d: %s", what, want.Version, m))
	}
	if !bytes.Equal(got.Value.Reveal(), want.Value.Reveal()) {
		d = append(d, fmt.Sprintf("%s version %d: its value changed", what, want.Version))
	}
	return d
}

func versionsOf(rs []vault.Record) []uint64 {
	out := make([]uint64, len(rs))
	for i, r := range rs {
		out[i] = r.Version
	}
	return out
}

func keptVersions(ks []kept) []uint64 {
	out := make([]uint64, len(ks))
	for i, k := range ks {
		out[i] = k.v
	}
	return out
}

func joinDiffs(d []string) string { return strings.Join(d, "; ") }

// wantKnownOnly checks that the vault keeps nothing of name but its
// highest version: no current record, no version, not deleted.
func (f *fixture) wantKnownOnly(s vault.Store, name string, highest uint64) {
	f.t.Helper()
	f.wantChain(s, name, chainWant{highest: highest})
}
