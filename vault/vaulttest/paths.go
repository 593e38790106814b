package vaulttest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/arca-secrets/arca/vault"
)

// A writePath is one of the three ways a write reaches a vault: Apply, a
// batch of one write, or a group of one write committed at once. The
// history rules (vault.Step) hold on each of them.
type writePath struct {
	name string
	// write makes w through the path and returns the metadata it answered
	// and what approve was shown of it. It is safe to call from any
	// goroutine.
	write func(ctx context.Context, s vault.Store, w vault.Write) (vault.Meta, []vault.Meta, error)
}

func writePaths() []writePath {
	return []writePath{{"Apply", applyOne}, {"Batch", batchOfOne}, {"Group", groupOfOne}}
}

func applyOne(ctx context.Context, s vault.Store, w vault.Write) (vault.Meta, []vault.Meta, error) {
	return applyRecording(ctx, s, w, nil)
}

func batchOfOne(ctx context.Context, s vault.Store, w vault.Write) (vault.Meta, []vault.Meta, error) {
	var shown []vault.Meta
	n, err := s.ApplyBatch(ctx, vault.Writes{w}, func(ms []vault.Meta) error {
		shown = append(shown, ms...)
		return nil
	})
	switch {
	case n < 0 || n > 1 || n > len(shown):
		return vault.Meta{}, shown, fmt.Errorf("ApplyBatch says %d of 1 write landed; approve was shown %d", n, len(shown))
	case err != nil:
		return vault.Meta{}, shown, err
	case n == 0:
		return vault.Meta{}, shown, fmt.Errorf("ApplyBatch landed nothing and answered no error")
	}
	return shown[0], shown, nil
}

func groupOfOne(ctx context.Context, s vault.Store, w vault.Write) (vault.Meta, []vault.Meta, error) {
	g, err := s.Group(ctx)
	if err != nil {
		return vault.Meta{}, nil, fmt.Errorf("Group: %w", err)
	}
	m, shown, err := addRecording(ctx, g, w)
	if err != nil {
		g.Abort()
		return vault.Meta{}, shown, err
	}
	return m, shown, g.Commit(ctx)
}

func addRecording(ctx context.Context, g vault.Group, w vault.Write) (vault.Meta, []vault.Meta, error) {
	var shown []vault.Meta
	m, err := g.Add(ctx, w, func(m vault.Meta) error {
		shown = append(shown, m)
		return nil
	})
	return m, shown, err
}

// hfix is a fixture whose writes go through one write path.
type hfix struct {
	*fixture
	via writePath
}

// historyCase is a case of the history rules, run once through each write
// path.
type historyCase struct {
	name string
	run  func(*hfix)
}

// viaEveryPath makes a testCase of each history case for each write path.
func viaEveryPath(hcs []historyCase) []testCase {
	var out []testCase
	for _, hc := range hcs {
		for _, p := range writePaths() {
			out = append(out, testCase{hc.name + "Via" + p.name, func(f *fixture) { hc.run(&hfix{f, p}) }})
		}
	}
	return out
}

// openWith opens a handle whose writes follow h.
func (f *fixture) openWith(h vault.History) vault.Store {
	f.t.Helper()
	s := f.open()
	s.SetHistory(h)
	return s
}

// try makes w, and checks that approve was shown, once, the metadata the
// write answered (Touch included) when it succeeded, and nothing when it
// failed before there was a change to approve.
func (h *hfix) try(s vault.Store, w vault.Write) (vault.Meta, error) {
	h.t.Helper()
	m, shown, err := h.via.write(h.t.Context(), s, w)
	switch {
	case err != nil && len(shown) != 0:
		h.t.Errorf("%s: approve was shown %d metas for a write that failed with %v", what(w), len(shown), err)
	case err == nil && len(shown) != 1:
		h.t.Fatalf("%s: approve was shown %d metas, want 1", what(w), len(shown))
	case err == nil:
		if d := diffMeta(shown[0], m); d != "" {
			h.t.Errorf("%s: approve was shown other metadata than the write answered: %s", what(w), d)
		}
		if d := diffTouch(shown[0].Touch, m.Touch); d != "" {
			h.t.Errorf("%s: approve was shown another Touch than the write answered: %s", what(w), d)
		}
	}
	return m, err
}

// must makes w, which must succeed.
func (h *hfix) must(s vault.Store, w vault.Write) vault.Meta {
	h.t.Helper()
	m, err := h.try(s, w)
	if err != nil {
		h.t.Fatalf("%s: %v", what(w), err)
	}
	return m
}

// wantWrite makes w, which must succeed, and checks what it answered:
// want's metadata and touch (nil: none).
func (h *hfix) wantWrite(s vault.Store, w vault.Write, want vault.Meta, touch *vault.Touch) vault.Meta {
	h.t.Helper()
	m := h.must(s, w)
	if d := diffMeta(m, want); d != "" {
		h.t.Errorf("%s: %s", what(w), d)
	}
	if d := diffTouch(m.Touch, touch); d != "" {
		h.t.Errorf("%s: touch %s", what(w), d)
	}
	return m
}

// wantVersion makes w, which must succeed leaving version v with touch.
func (h *hfix) wantVersion(s vault.Store, w vault.Write, v uint64, touch *vault.Touch) vault.Meta {
	h.t.Helper()
	m := h.must(s, w)
	if m.Version != v {
		h.t.Errorf("%s: version %d, want %d", what(w), m.Version, v)
	}
	if d := diffTouch(m.Touch, touch); d != "" {
		h.t.Errorf("%s: touch %s", what(w), d)
	}
	return m
}

// wantRefused makes w, which must fail as check says (check returns what
// is wrong with err, "" when it is right), and checks that it changed
// nothing of w.Name.
func (h *hfix) wantRefused(s vault.Store, w vault.Write, check func(error) string) {
	h.t.Helper()
	before, berr := s.Chain(h.t.Context(), w.Name)
	if berr != nil && !errors.Is(berr, vault.ErrNotFound) {
		h.t.Fatalf("Chain(%s): %v", w.Name, berr)
	}
	_, err := h.try(s, w)
	if d := check(err); d != "" {
		h.t.Errorf("%s: %s", what(w), d)
	}
	after, aerr := h.open().Chain(h.t.Context(), w.Name)
	switch {
	case berr != nil && !errors.Is(aerr, vault.ErrNotFound):
		h.t.Errorf("%s refused: Chain after it: %v, want ErrNotFound as before", what(w), aerr)
	case berr == nil && aerr != nil:
		h.t.Errorf("%s refused: Chain after it: %v", what(w), aerr)
	case berr == nil:
		if d := diffChain(after, before); d != "" {
			h.t.Errorf("%s refused, yet the name changed: %s", what(w), d)
		}
	}
}

// isConflict checks that err is a *vault.ConflictError naming current.
func isConflict(current uint64) func(error) string {
	return func(err error) string {
		var ce *vault.ConflictError
		switch {
		case !errors.As(err, &ce):
			return fmt.Sprintf("err %v, want a *ConflictError", err)
		case ce.Current != current:
			return fmt.Sprintf("conflict with current version %d, want %d", ce.Current, current)
		case errors.Is(err, vault.ErrNotFound):
			return "a conflict that is also ErrNotFound"
		}
		return ""
	}
}

// isNotFound checks that err is ErrNotFound; versions, when given, are
// those a *vault.VersionNotFoundError must name.
func isNotFound(versions ...uint64) func(error) string {
	return func(err error) string {
		var ve *vault.VersionNotFoundError
		switch {
		case !errors.Is(err, vault.ErrNotFound):
			return fmt.Sprintf("err %v, want ErrNotFound", err)
		case len(versions) == 0:
			return ""
		case !errors.As(err, &ve):
			return fmt.Sprintf("err %v, want a *VersionNotFoundError", err)
		case !slices.Equal(ve.Versions, versions):
			return fmt.Sprintf("VersionNotFoundError names versions %v, want %v", ve.Versions, versions)
		}
		return ""
	}
}

// what names w in a failure message: its kind and name, never its value.
func what(w vault.Write) string {
	k := fmt.Sprintf("kind %d", w.Kind)
	switch w.Kind {
	case vault.Put:
		k = "put"
	case vault.Rotate:
		k = "rotate"
	case vault.Remove:
		k = "rm"
	case vault.Restore:
		k = "restore"
	case vault.Rollback:
		k = fmt.Sprintf("rollback to %d of", w.Version)
	case vault.Undelete:
		k = "undelete"
	case vault.Destroy:
		k = fmt.Sprintf("destroy %v of", w.Versions)
	}
	if w.IfVersion != nil {
		k = fmt.Sprintf("%s (if_version %d)", k, *w.IfVersion)
	}
	return k + " " + w.Name
}

// diffTouch describes how got differs from want (nil: no touch).
func diffTouch(got, want *vault.Touch) string {
	switch {
	case got == nil && want == nil:
		return ""
	case got == nil:
		return fmt.Sprintf("none, want %+v", *want)
	case want == nil:
		return fmt.Sprintf("%+v, want none", *got)
	}
	var d []string
	if !slices.Equal(got.Erased, want.Erased) {
		d = append(d, fmt.Sprintf("erased %v, want %v", got.Erased, want.Erased))
	}
	if got.Gone != want.Gone {
		d = append(d, fmt.Sprintf("gone %t, want %t", got.Gone, want.Gone))
	}
	if got.From != want.From {
		d = append(d, fmt.Sprintf("from %d, want %d", got.From, want.From))
	}
	d = append(d, diffTime("deleted_at", got.DeletedAt, want.DeletedAt)...)
	return joinDiffs(d)
}

// diffTime describes how two times differ: instant, zero or zone.
func diffTime(what string, got, want time.Time) []string {
	switch {
	case !got.Equal(want) || got.IsZero() != want.IsZero():
		return []string{fmt.Sprintf("%s %s, want %s", what, got.Format(time.RFC3339Nano), want.Format(time.RFC3339Nano))}
	case !got.IsZero() && got.Location() != time.UTC:
		return []string{fmt.Sprintf("%s in zone %s, want UTC", what, got.Location())}
	}
	return nil
}
