package vaulttest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arca-secrets/arca/vault"
)

// clock is the suite's settable clock. It reads in a zone east of UTC so a
// backend that forgets to convert to UTC is caught.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock {
	zone := time.FixedZone("UTC+05:30", 5*3600+30*60)
	return &clock{t: time.Date(2025, 3, 4, 5, 6, 7, 123456789, zone)}
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// tick moves the clock forward by a little over a second (so nanoseconds
// matter) and returns the new time.
func (c *clock) tick() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second + 987654321)
	return c.t
}

// advance moves the clock forward by d and returns the new time.
func (c *clock) advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	return c.t
}

// fixture is one subtest's vault, clock and helpers. Helpers fail the test
// on any unexpected error.
type fixture struct {
	t     *testing.T
	h     Harness
	clock *clock
}

// open returns a new handle, closed when the test ends.
func (f *fixture) open() vault.Store {
	f.t.Helper()
	s, err := f.h.Open()
	if err != nil {
		f.t.Fatalf("Open: %v", err)
	}
	f.t.Cleanup(func() {
		if err := s.Close(); err != nil {
			f.t.Errorf("Close: %v", err)
		}
	})
	return s
}

// apply applies w, which must succeed, and checks that approve was called
// exactly once, with the metadata Apply returns.
func (f *fixture) apply(s vault.Store, w vault.Write) vault.Meta {
	f.t.Helper()
	m, approved, err := applyRecording(f.t.Context(), s, w, nil)
	if err != nil {
		f.t.Fatalf("Apply(%v %s): %v", w.Kind, w.Name, err)
	}
	if len(approved) != 1 {
		f.t.Fatalf("Apply(%v %s): approve called %d times, want 1", w.Kind, w.Name, len(approved))
	}
	if d := diffMeta(approved[0], m); d != "" {
		f.t.Fatalf("Apply(%v %s): approve saw other metadata than Apply returned: %s", w.Kind, w.Name, d)
	}
	return m
}

// applyRecording applies w with an approve that records what it is shown
// and returns deny.
func applyRecording(ctx context.Context, s vault.Store, w vault.Write, deny error) (vault.Meta, []vault.Meta, error) {
	var seen []vault.Meta
	m, err := s.Apply(ctx, w, func(m vault.Meta) error {
		seen = append(seen, m)
		return deny
	})
	return m, seen, err
}

func (f *fixture) put(s vault.Store, name, value string) vault.Meta {
	f.t.Helper()
	return f.apply(s, vault.Write{Kind: vault.Put, Name: name, Value: secret(value)})
}

func (f *fixture) rotate(s vault.Store, name, value string) vault.Meta {
	f.t.Helper()
	return f.apply(s, vault.Write{Kind: vault.Rotate, Name: name, Value: secret(value)})
}

func (f *fixture) remove(s vault.Store, name string) vault.Meta {
	f.t.Helper()
	return f.apply(s, vault.Write{Kind: vault.Remove, Name: name})
}

func (f *fixture) get(s vault.Store, name string) vault.Record {
	f.t.Helper()
	r, err := s.Get(f.t.Context(), name)
	if err != nil {
		f.t.Fatalf("Get(%s): %v", name, err)
	}
	return r
}

// wantRecord checks that name holds value with metadata want (as Get
// reports it: Created is never set).
func (f *fixture) wantRecord(s vault.Store, name, value string, want vault.Meta) {
	f.t.Helper()
	r := f.get(s, name)
	if !r.Value.Equal(secret(value)) || !bytes.Equal(r.Value.Reveal(), []byte(value)) {
		f.t.Errorf("Get(%s): value of %d bytes differs from the %d bytes stored", name, r.Value.Len(), len(value))
	}
	want.Created = false
	if d := diffRead(r.Meta, want); d != "" {
		f.t.Errorf("Get(%s): %s", name, d)
	}
}

func (f *fixture) wantNotFound(s vault.Store, name string) {
	f.t.Helper()
	r, err := s.Get(f.t.Context(), name)
	if !errors.Is(err, vault.ErrNotFound) {
		f.t.Fatalf("Get(%s) = err %v, want ErrNotFound", name, err)
	}
	if r.Value.Len() != 0 {
		f.t.Errorf("Get(%s) returned a value with ErrNotFound", name)
	}
}

func (f *fixture) list(s vault.Store) []vault.Meta {
	f.t.Helper()
	ms, err := s.List(f.t.Context())
	if err != nil {
		f.t.Fatalf("List: %v", err)
	}
	return ms
}

// wantList checks that List gives exactly want, in order.
func (f *fixture) wantList(s vault.Store, want []vault.Meta) {
	f.t.Helper()
	got := f.list(s)
	if len(got) != len(want) {
		f.t.Fatalf("List: %d records %v, want %d %v", len(got), names(got), len(want), names(want))
	}
	for i := range got {
		w := want[i]
		w.Created = false
		if d := diffRead(got[i], w); d != "" {
			f.t.Errorf("List[%d]: %s", i, d)
		}
	}
}

func names(ms []vault.Meta) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Name
	}
	return out
}

// diffMeta describes how got differs from want, "" when it does not. Times
// must be equal instants and in UTC.
func diffMeta(got, want vault.Meta) string {
	var d []string
	if got.Name != want.Name {
		d = append(d, fmt.Sprintf("name %q, want %q", got.Name, want.Name))
	}
	if got.Version != want.Version {
		d = append(d, fmt.Sprintf("version %d, want %d", got.Version, want.Version))
	}
	if got.Created != want.Created {
		d = append(d, fmt.Sprintf("created %t, want %t", got.Created, want.Created))
	}
	for _, tm := range []struct {
		what      string
		got, want time.Time
	}{
		{"created_at", got.CreatedAt, want.CreatedAt},
		{"updated_at", got.UpdatedAt, want.UpdatedAt},
		{"rotated_at", got.RotatedAt, want.RotatedAt},
	} {
		switch {
		case !tm.got.Equal(tm.want) || tm.got.IsZero() != tm.want.IsZero():
			d = append(d, fmt.Sprintf("%s %s, want %s", tm.what, tm.got.Format(time.RFC3339Nano), tm.want.Format(time.RFC3339Nano)))
		case tm.got.Location() != time.UTC:
			d = append(d, fmt.Sprintf("%s in zone %s, want UTC", tm.what, tm.got.Location()))
		}
	}
	return strings.Join(d, "; ")
}

// diffRead is diffMeta for what a read returns, which never carries a
// Touch.
func diffRead(got, want vault.Meta) string {
	d := diffMeta(got, want)
	if got.Touch != nil {
		d = strings.TrimPrefix(d+"; a touch on what a read returns", "; ")
	}
	return d
}

func secret(s string) vault.Secret { return vault.NewSecret([]byte(s)) }

// leaks reports which of the needles text contains.
func leaks(text string, needles ...string) []string {
	var out []string
	for _, n := range needles {
		if n != "" && strings.Contains(text, n) {
			out = append(out, n)
		}
	}
	return out
}
