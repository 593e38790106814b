package ops_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/opstest"
	"github.com/arca-secrets/arca/vault"
)

// historyFixture is a service on in-memory vaults that follow vault.Step,
// its audit events in events, its clock advanced a second a call.
func historyFixture(t *testing.T, toml string) (*ops.Service, *bytes.Buffer) {
	t.Helper()
	events := &bytes.Buffer{}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := func() time.Time { at = at.Add(time.Second); return at }
	f := opstest.New(t, opstest.Options{Config: toml, Audit: events, Now: clock, Backends: &opstest.MemBackends{}})
	return f.Service, events
}

func put(t *testing.T, s *ops.Service, ref, value string) ops.PutResult {
	t.Helper()
	r, err := s.Put(context.Background(), ops.Request{Ref: ref, Value: vault.NewSecret([]byte(value))})
	if err != nil {
		t.Fatalf("put %s: %v", ref, err)
	}
	return r
}

func u64(v uint64) *uint64 { return &v }

// TestVersionsAndHistory: get reads a kept version, history lists them
// newest first, rollback writes one again, rm is a soft delete that list
// with deleted shows and undelete undoes, destroy erases for good; every
// write names the versions it touched in its event.
func TestVersionsAndHistory(t *testing.T) {
	ctx := context.Background()
	s, events := historyFixture(t, "")
	const ref = "arca://app/db"
	for _, v := range []string{"one", "two", "three"} {
		put(t, s, ref, v)
	}
	got, err := s.Get(ctx, ops.Request{Ref: ref, Version: 1})
	if err != nil || string(got.Value.Reveal()) != "one" || got.Version != 1 {
		t.Fatalf("get version 1 = %d, %v", got.Version, err)
	}
	if _, err := s.Get(ctx, ops.Request{Ref: ref, Version: 9}); ops.CodeOf(err) != manifest.NotFound || !strings.Contains(err.Error(), "version 9") {
		t.Errorf("get of a version not kept: %v, want not_found naming version 9", err)
	}
	h, err := s.History(ctx, ops.Request{Ref: ref})
	if err != nil || h.Current == nil || *h.Current != 3 || len(h.Versions) != 3 || h.Versions[0].State != "current" || h.Versions[2].Version != 1 || h.MaxVersions != 10 {
		t.Fatalf("history = %+v, %v", h, err)
	}
	rb, err := s.Rollback(ctx, ops.Request{Ref: ref, Version: 1})
	if err != nil || rb.Version != 4 || rb.RolledBackFrom != 1 {
		t.Fatalf("rollback = %+v, %v", rb, err)
	}
	if got, _ := s.Get(ctx, ops.Request{Ref: ref}); string(got.Value.Reveal()) != "one" {
		t.Error("after a rollback to version 1, get does not answer its value")
	}
	if _, err := s.Rm(ctx, ops.Request{Ref: ref}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, ops.Request{Ref: ref, Version: 2}); ops.CodeOf(err) != manifest.NotFound {
		t.Errorf("get with version of a soft-deleted name: %v, want not_found", err)
	}
	l, err := s.List(ctx, ops.Request{Deleted: true})
	if err != nil || len(l.Records) != 1 || l.Records[0].DeletedAt.IsZero() || l.Records[0].Version != 4 {
		t.Fatalf("list deleted = %+v, %v", l, err)
	}
	if l, _ := s.List(ctx, ops.Request{}); len(l.Records) != 0 {
		t.Errorf("list shows a soft-deleted name: %+v", l.Records)
	}
	h, _ = s.History(ctx, ops.Request{Ref: ref})
	if h.Current != nil || h.DeletedAt.IsZero() || h.Versions[0].State != "deleted" {
		t.Errorf("history of a soft-deleted name = %+v", h)
	}
	un, err := s.Undelete(ctx, ops.Request{Ref: ref})
	if err != nil || !un.Undeleted || un.Version != 5 {
		t.Fatalf("undelete = %+v, %v", un, err)
	}
	if _, err := s.Undelete(ctx, ops.Request{Ref: ref}); ops.CodeOf(err) != manifest.NotFound || !strings.Contains(err.Error(), "not a removed secret") {
		t.Errorf("undelete of a name not deleted: %v, want not_found", err)
	}
	d, err := s.Destroy(ctx, ops.Request{Ref: ref, Versions: []uint64{1, 2}})
	if err != nil || len(d.Destroyed) != 2 || d.Removed {
		t.Fatalf("destroy 1, 2 = %+v, %v", d, err)
	}
	if _, err := s.Get(ctx, ops.Request{Ref: ref, Version: 1}); ops.CodeOf(err) != manifest.NotFound {
		t.Errorf("a destroyed version is read: %v", err)
	}
	if _, err := s.Destroy(ctx, ops.Request{Ref: ref, Versions: []uint64{1}}); ops.CodeOf(err) != manifest.NotFound || !strings.Contains(err.Error(), "version 1") {
		t.Errorf("destroy of a version not kept: %v, want not_found naming it", err)
	}
	if d, err := s.Destroy(ctx, ops.Request{Ref: ref}); err != nil || !d.Removed {
		t.Fatalf("destroy of the whole name = %+v, %v", d, err)
	}
	if r := put(t, s, ref, "again"); r.Version != 6 || !r.Created {
		t.Errorf("a name written again after destroy = %+v: numbering must continue", r)
	}
	ev := events.String()
	for _, want := range []string{`"event":"rollback"`, "rolled back from version 1", "undeleted version 4",
		"destroyed versions 1, 2: a deliberate loss", `"event":"history"`, "no version of the name is left"} {
		if !strings.Contains(ev, want) {
			t.Errorf("the audit trail has no %q", want)
		}
	}
	for _, v := range []string{"one", "two", "three"} {
		if strings.Contains(ev, `"`+v+`"`) {
			t.Errorf("the audit trail holds the value %q", v)
		}
	}
}

// TestIfVersion: a write carrying if_version is made only when it names
// the current version (0: none); else it is conflict, with the current
// version, and nothing is written.
func TestIfVersion(t *testing.T) {
	ctx := context.Background()
	s, _ := historyFixture(t, "")
	const ref = "arca://app/db"
	if _, err := s.Rotate(ctx, ops.Request{Ref: ref, Value: vault.NewSecret([]byte("x")), IfVersion: u64(0)}); err == nil {
		t.Fatal("rotate of a missing name succeeded")
	}
	if _, err := s.Put(ctx, ops.Request{Ref: ref, Value: vault.NewSecret([]byte("a")), IfVersion: u64(0)}); err != nil {
		t.Fatalf("put if_version 0 of a new name: %v", err)
	}
	_, err := s.Put(ctx, ops.Request{Ref: ref, Value: vault.NewSecret([]byte("b")), IfVersion: u64(0)})
	if cur, ok := ops.ConflictOf(err); !ok || cur != 1 || ops.CodeOf(err) != manifest.Conflict || manifest.ExitStatus(ops.CodeOf(err)) != 5 {
		t.Fatalf("put if_version 0 of an existing name: %v (current %d, %v)", err, cur, ok)
	}
	_, err = s.Rm(ctx, ops.Request{Ref: ref, IfVersion: u64(7)})
	if cur, ok := ops.ConflictOf(err); !ok || cur != 1 {
		t.Errorf("rm if_version 7: %v", err)
	}
	if got, _ := s.Get(ctx, ops.Request{Ref: ref}); string(got.Value.Reveal()) != "a" {
		t.Error("a conflict wrote")
	}
	if _, err := s.Rm(ctx, ops.Request{Ref: ref, IfVersion: u64(1)}); err != nil {
		t.Errorf("rm if_version 1: %v", err)
	}
	_, err = s.Rotate(ctx, ops.Request{Ref: ref, Value: vault.NewSecret([]byte("c")), IfVersion: u64(1)})
	if cur, ok := ops.ConflictOf(err); !ok || cur != 0 {
		t.Errorf("rotate if_version 1 of a soft-deleted name: %v, want conflict with current 0", err)
	}
	if _, err := s.Undelete(ctx, ops.Request{Ref: ref, IfVersion: u64(0)}); err != nil {
		t.Errorf("undelete if_version 0: %v", err)
	}
}

// TestChanges: changes answers the current cursor, then each name that
// changed since, once, with its state now; a cursor arca never gave is
// bad_request.
func TestChanges(t *testing.T) {
	ctx := context.Background()
	s, _ := historyFixture(t, "")
	c0, err := s.Changes(ctx, ops.Request{})
	if err != nil || c0.Cursor == "" || len(c0.Changes) != 0 {
		t.Fatalf("changes without since = %+v, %v", c0, err)
	}
	put(t, s, "arca://app/a", "1")
	put(t, s, "arca://app/a", "2")
	put(t, s, "arca://app/b", "1")
	if _, err := s.Rm(ctx, ops.Request{Ref: "arca://app/b"}); err != nil {
		t.Fatal(err)
	}
	c1, err := s.Changes(ctx, ops.Request{Since: c0.Cursor})
	if err != nil || len(c1.Changes) != 2 {
		t.Fatalf("changes = %+v, %v", c1, err)
	}
	if a := c1.Changes[0]; a.Ref != "arca://app/a" || a.Version != 2 || a.State != "current" {
		t.Errorf("first change = %+v", a)
	}
	if b := c1.Changes[1]; b.Ref != "arca://app/b" || b.State != "deleted" {
		t.Errorf("second change = %+v", b)
	}
	if c2, _ := s.Changes(ctx, ops.Request{Since: c1.Cursor}); len(c2.Changes) != 0 {
		t.Errorf("changes since the last cursor = %+v", c2.Changes)
	}
	if _, err := s.Changes(ctx, ops.Request{Since: "nope"}); ops.CodeOf(err) != manifest.BadRequest {
		t.Errorf("a cursor arca never gave: %v, want bad_request", err)
	}
}

// TestHistoryGuardrails: a guardrail on get covers history and get of a
// version; one on put covers rollback and undelete; one on rm, destroy.
func TestHistoryGuardrails(t *testing.T) {
	ctx := context.Background()
	s, _ := historyFixture(t, `
[[guardrails.rule]]
ops = ["get", "put", "rm"]
ref = "billing/*"
reason = "hands off"
`)
	const ref = "arca://billing/key"
	for name, run := range map[string]func() error{
		"history":          func() error { _, err := s.History(ctx, ops.Request{Ref: ref}); return err },
		"get with version": func() error { _, err := s.Get(ctx, ops.Request{Ref: ref, Version: 1}); return err },
		"rollback":         func() error { _, err := s.Rollback(ctx, ops.Request{Ref: ref, Version: 1}); return err },
		"undelete":         func() error { _, err := s.Undelete(ctx, ops.Request{Ref: ref}); return err },
		"destroy":          func() error { _, err := s.Destroy(ctx, ops.Request{Ref: ref}); return err },
	} {
		if err := run(); ops.CodeOf(err) != manifest.Denied {
			t.Errorf("%s of a guarded ref: %v, want denied", name, err)
		}
	}
	if _, err := s.History(ctx, ops.Request{Ref: "arca://app/x"}); ops.CodeOf(err) != manifest.NotFound {
		t.Errorf("history of an unguarded name never written: %v, want not_found", err)
	}
}

// TestVersionFields: the version fields are checked as the wire checks
// them, on every door.
func TestVersionFields(t *testing.T) {
	ctx := context.Background()
	s, _ := historyFixture(t, "")
	for name, run := range map[string]func() error{
		"versions empty": func() error {
			_, err := s.Destroy(ctx, ops.Request{Ref: "arca://a/b", Versions: []uint64{}})
			return err
		},
		"versions zero": func() error {
			_, err := s.Destroy(ctx, ops.Request{Ref: "arca://a/b", Versions: []uint64{0}})
			return err
		},
		"versions twice": func() error {
			_, err := s.Destroy(ctx, ops.Request{Ref: "arca://a/b", Versions: []uint64{2, 2}})
			return err
		},
		"if_version on get": func() error { _, err := s.Get(ctx, ops.Request{Ref: "arca://a/b", IfVersion: u64(1)}); return err },
		"version too big":   func() error { _, err := s.Get(ctx, ops.Request{Ref: "arca://a/b", Version: 1 << 60}); return err },
		"rollback without version": func() error {
			_, err := s.Rollback(ctx, ops.Request{Ref: "arca://a/b"})
			return err
		},
	} {
		if err := run(); ops.CodeOf(err) != manifest.BadRequest {
			t.Errorf("%s: %v, want bad_request", name, err)
		}
	}
	if manifest.MaxChanges != vault.MaxChanges || manifest.MaxKeptVersions != vault.MaxMaxVersions {
		t.Error("the manifest's history limits are not the vault's")
	}
	if !errors.Is(&vault.VersionNotFoundError{Versions: []uint64{1}}, vault.ErrNotFound) {
		t.Error("a version not kept is not a not_found")
	}
}

// TestRmErasesAtOnce: with keep_deleted "0s", rm erases, and its event
// says which versions, as a put past max_versions says what it erased.
func TestRmErasesAtOnce(t *testing.T) {
	ctx := context.Background()
	s, events := historyFixture(t, "[vaults.default]\nkind = \"file\"\n[vaults.default.history]\nkeep_deleted = \"0s\"\nmax_versions = 2\n")
	for _, v := range []string{"one", "two", "three"} {
		put(t, s, "arca://app/db", v)
	}
	if !strings.Contains(events.String(), `"version":3,"message":"erased version 1"`) {
		t.Errorf("a put past max_versions does not say what it erased:\n%s", events)
	}
	if _, err := s.Rm(ctx, ops.Request{Ref: "arca://app/db"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(events.String(), `"message":"erased versions 2, 3; no version of the name is left"`) {
		t.Errorf("an rm that erases does not say so:\n%s", events)
	}
	if _, err := s.Undelete(ctx, ops.Request{Ref: "arca://app/db"}); ops.CodeOf(err) != manifest.NotFound {
		t.Errorf("undelete after an erasing rm: %v, want not_found", err)
	}
}
