package vault_test

import (
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/arca-secrets/arca/vault"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// stepper applies writes to one name's chain in turn, a minute apart.
type stepper struct {
	t   *testing.T
	h   vault.History
	c   vault.Chain
	now time.Time
}

func newStepper(t *testing.T, h vault.History) *stepper {
	return &stepper{t: t, h: h, now: t0}
}

func (s *stepper) try(w vault.Write) (vault.Meta, error) {
	s.t.Helper()
	s.now = s.now.Add(time.Minute)
	w.Name = "app/key"
	next, m, err := vault.Step(w, s.c, s.h, s.now)
	if err == nil {
		s.c = next
	}
	return m, err
}

func (s *stepper) do(w vault.Write) vault.Meta {
	s.t.Helper()
	m, err := s.try(w)
	if err != nil {
		s.t.Fatalf("kind %d: %v", w.Kind, err)
	}
	return m
}

func put(v string) vault.Write {
	return vault.Write{Kind: vault.Put, Value: vault.NewSecret([]byte(v))}
}

func ver(n uint64) *uint64 { return &n }

// kept is the chain's kept versions, newest first, with their states.
func kept(c vault.Chain) []string {
	var out []string
	for _, v := range c.Versions() {
		out = append(out, string(v.State)[:1]+strconv.FormatUint(v.Version, 10))
	}
	return out
}

func value(t *testing.T, c vault.Chain, v uint64) string {
	t.Helper()
	r, ok := c.Find(v)
	if !ok {
		t.Fatalf("version %d not kept", v)
	}
	return string(r.Value.Reveal())
}

func TestStepNumbersNeverRepeatAndTrim(t *testing.T) {
	s := newStepper(t, vault.History{MaxVersions: 3, KeepDeleted: time.Hour})
	if m := s.do(put("a")); m.Version != 1 || !m.Created || m.Touch != nil {
		t.Fatalf("create: %+v", m)
	}
	s.do(put("b"))
	s.do(put("c"))
	m := s.do(put("d"))
	if m.Version != 4 || m.Created || m.Touch == nil || !slices.Equal(m.Touch.Erased, []uint64{1}) {
		t.Fatalf("fourth put: %+v %+v", m, m.Touch)
	}
	if got := kept(s.c); !slices.Equal(got, []string{"c4", "p3", "p2"}) {
		t.Fatalf("kept %v", got)
	}
	if m.CreatedAt != t0.Add(time.Minute) || m.UpdatedAt != s.now {
		t.Fatalf("times: %+v", m)
	}
	rm := s.do(vault.Write{Kind: vault.Remove})
	if rm.Version != 4 || rm.Touch == nil || rm.Touch.DeletedAt != s.now {
		t.Fatalf("rm: %+v", rm)
	}
	if got := kept(s.c); !slices.Equal(got, []string{"d4", "p3", "p2"}) || s.c.HasCurrent {
		t.Fatalf("after rm %v", got)
	}
	again := s.do(put("e"))
	if again.Version != 5 || !again.Created {
		t.Fatalf("put after rm: %+v", again)
	}
	if got := kept(s.c); !slices.Equal(got, []string{"c5", "p4", "p3"}) || s.c.Deleted() {
		t.Fatalf("after put over a soft delete %v", got)
	}
}

func TestStepMaxVersionsOneKeepsNone(t *testing.T) {
	s := newStepper(t, vault.History{MaxVersions: 1})
	s.do(put("a"))
	if m := s.do(put("b")); m.Version != 2 || !slices.Equal(m.Touch.Erased, []uint64{1}) {
		t.Fatalf("%+v", m)
	}
	m := s.do(vault.Write{Kind: vault.Remove})
	if !m.Touch.Gone || !slices.Equal(m.Touch.Erased, []uint64{2}) || s.c.Known() && len(s.c.Versions()) != 0 {
		t.Fatalf("rm with keep_deleted 0: %+v %v", m.Touch, kept(s.c))
	}
	if s.c.Highest != 2 {
		t.Fatalf("highest %d", s.c.Highest)
	}
	if m := s.do(put("c")); m.Version != 3 || !m.Created {
		t.Fatalf("numbering continues after erase: %+v", m)
	}
}

func TestStepIfVersion(t *testing.T) {
	s := newStepper(t, vault.DefaultHistory())
	var ce *vault.ConflictError
	w := put("a")
	w.IfVersion = ver(1)
	if _, err := s.try(w); !errors.As(err, &ce) || ce.Current != 0 {
		t.Fatalf("if_version 1 on nothing: %v", err)
	}
	w.IfVersion = ver(0)
	s.do(w)
	w.IfVersion = ver(0)
	if _, err := s.try(w); !errors.As(err, &ce) || ce.Current != 1 {
		t.Fatalf("if_version 0 on v1: %v", err)
	}
	before := s.c
	for _, k := range []vault.Kind{vault.Rotate, vault.Remove, vault.Rollback, vault.Undelete} {
		_, err := s.try(vault.Write{Kind: k, IfVersion: ver(7), Version: 1})
		if !errors.As(err, &ce) || ce.Current != 1 {
			t.Fatalf("kind %d: %v", k, err)
		}
	}
	if s.c.Current.Version != before.Current.Version || len(s.c.Previous) != 0 {
		t.Fatal("a conflict changed the chain")
	}
	// Checked before not_found: a rotate of a removed name.
	s.do(vault.Write{Kind: vault.Remove})
	if _, err := s.try(vault.Write{Kind: vault.Rotate, IfVersion: ver(1)}); !errors.As(err, &ce) || ce.Current != 0 {
		t.Fatalf("rotate of a removed name with if_version: %v", err)
	}
	if _, err := s.try(vault.Write{Kind: vault.Rotate}); !errors.Is(err, vault.ErrNotFound) {
		t.Fatalf("rotate of a removed name: %v", err)
	}
}

func TestStepRollbackUndelete(t *testing.T) {
	s := newStepper(t, vault.DefaultHistory())
	s.do(put("a"))
	s.do(vault.Write{Kind: vault.Rotate, Value: vault.NewSecret([]byte("b"))})
	m := s.do(vault.Write{Kind: vault.Rollback, Version: 1})
	if m.Version != 3 || m.Touch == nil || m.Touch.From != 1 || value(t, s.c, 3) != "a" {
		t.Fatalf("rollback: %+v", m)
	}
	if m.RotatedAt.IsZero() {
		t.Fatal("a rollback forgot the rotation time")
	}
	var nf *vault.VersionNotFoundError
	if _, err := s.try(vault.Write{Kind: vault.Rollback, Version: 9}); !errors.As(err, &nf) || !errors.Is(err, vault.ErrNotFound) {
		t.Fatalf("rollback to a version not kept: %v", err)
	}
	if _, err := s.try(vault.Write{Kind: vault.Undelete}); !errors.Is(err, vault.ErrNotFound) {
		t.Fatalf("undelete of a live name: %v", err)
	}
	s.do(vault.Write{Kind: vault.Remove})
	if _, err := s.try(vault.Write{Kind: vault.Rollback, Version: 1}); !errors.Is(err, vault.ErrNotFound) {
		t.Fatalf("rollback of a deleted name: %v", err)
	}
	u := s.do(vault.Write{Kind: vault.Undelete})
	if u.Version != 4 || u.Created || u.Touch.From != 3 || value(t, s.c, 4) != "a" || s.c.Deleted() {
		t.Fatalf("undelete: %+v %+v", u, u.Touch)
	}
	if got := kept(s.c); !slices.Equal(got, []string{"c4", "p3", "p2", "p1"}) {
		t.Fatalf("kept %v", got)
	}
}

func TestStepExpiry(t *testing.T) {
	s := newStepper(t, vault.History{MaxVersions: 5, KeepDeleted: time.Hour})
	s.do(put("a"))
	s.do(put("b"))
	s.do(vault.Write{Kind: vault.Remove})
	c, erased := vault.Expire(s.c, s.h, s.now.Add(59*time.Minute))
	if erased != nil || !c.Deleted() {
		t.Fatal("expired early")
	}
	s.now = s.now.Add(time.Hour)
	if _, err := s.try(vault.Write{Kind: vault.Undelete}); !errors.Is(err, vault.ErrNotFound) {
		t.Fatalf("undelete past keep_deleted: %v", err)
	}
	m := s.do(put("c"))
	if m.Version != 3 || !m.Created || m.Touch == nil || !slices.Equal(m.Touch.Erased, []uint64{1, 2}) {
		t.Fatalf("a write past keep_deleted: %+v %+v", m, m.Touch)
	}
	if got := kept(s.c); !slices.Equal(got, []string{"c3"}) {
		t.Fatalf("kept %v", got)
	}
}

func TestStepDestroy(t *testing.T) {
	s := newStepper(t, vault.DefaultHistory())
	for _, v := range []string{"a", "b", "c"} {
		s.do(put(v))
	}
	var nf *vault.VersionNotFoundError
	if _, err := s.try(vault.Write{Kind: vault.Destroy, Versions: []uint64{2, 9}}); !errors.As(err, &nf) || !slices.Equal(nf.Versions, []uint64{9}) {
		t.Fatalf("destroy of a version not kept: %v", err)
	}
	if len(s.c.Versions()) != 3 {
		t.Fatal("a refused destroy changed the chain")
	}
	m := s.do(vault.Write{Kind: vault.Destroy, Versions: []uint64{1, 1}})
	if m.Version != 3 || !slices.Equal(m.Touch.Erased, []uint64{1}) || m.Touch.Gone {
		t.Fatalf("destroy 1: %+v %+v", m, m.Touch)
	}
	m = s.do(vault.Write{Kind: vault.Destroy, Versions: []uint64{3}})
	if m.Version != 0 || m.Touch.Gone || s.c.HasCurrent || s.c.Deleted() {
		t.Fatalf("destroy of the current version: %+v %+v", m, m.Touch)
	}
	if got := kept(s.c); !slices.Equal(got, []string{"p2"}) {
		t.Fatalf("kept %v", got)
	}
	// What is left never expires: it was not removed.
	if c, erased := vault.Expire(s.c, vault.History{MaxVersions: 10}, s.now.Add(1000*time.Hour)); erased != nil || len(c.Previous) != 1 {
		t.Fatalf("the versions a destroy left expired: %v", erased)
	}
	m = s.do(vault.Write{Kind: vault.Destroy})
	if !m.Touch.Gone || !slices.Equal(m.Touch.Erased, []uint64{2}) || s.c.Deleted() || s.c.Highest != 3 {
		t.Fatalf("destroy all: %+v %+v", m, m.Touch)
	}
	if _, err := s.try(vault.Write{Kind: vault.Destroy}); !errors.Is(err, vault.ErrNotFound) {
		t.Fatalf("destroy of nothing kept: %v", err)
	}
	if m := s.do(put("d")); m.Version != 4 {
		t.Fatalf("numbering after destroy: %d", m.Version)
	}
}

func restoreWrite(c vault.Chain) vault.Write { return vault.Write{Kind: vault.Restore, Chain: &c} }

func backupChain(versions ...uint64) vault.Chain {
	var c vault.Chain
	for i, v := range versions {
		r := vault.Record{Meta: vault.Meta{Version: v, CreatedAt: t0, UpdatedAt: t0.Add(time.Duration(v) * time.Second)}, Value: vault.NewSecret([]byte{'0' + byte(v)})}
		if i == 0 {
			c.Current, c.HasCurrent = r, true
		} else {
			c.Previous = append(c.Previous, r)
		}
	}
	return c
}

func TestStepRestore(t *testing.T) {
	s := newStepper(t, vault.DefaultHistory())
	m := s.do(restoreWrite(backupChain(7, 5, 2)))
	if m.Version != 7 || !m.Created || !slices.Equal(kept(s.c), []string{"c7", "p5", "p2"}) || s.c.Highest != 7 {
		t.Fatalf("restore into nothing: %+v %v", m, kept(s.c))
	}
	// Into a name the vault holds: never lower a version.
	m = s.do(restoreWrite(backupChain(6, 4)))
	if m.Version != 8 || value(t, s.c, 8) != "6" || !slices.Equal(kept(s.c), []string{"c8", "p7", "p5", "p2"}) {
		t.Fatalf("restore below: %+v %v", m, kept(s.c))
	}
	m = s.do(restoreWrite(backupChain(10, 9, 3)))
	if m.Version != 10 || !slices.Equal(kept(s.c), []string{"c10", "p9", "p8", "p7", "p5", "p2"}) {
		t.Fatalf("restore above: %+v %v", m, kept(s.c))
	}
	if _, err := s.try(restoreWrite(backupChain(3, 3))); err == nil {
		t.Fatal("a backup with a repeated version was restored")
	}
	bad := backupChain(4)
	bad.Current.UpdatedAt = time.Time{}
	if _, err := s.try(restoreWrite(bad)); err == nil {
		t.Fatal("a version without its times was restored")
	}
	// A legacy restore: Meta and Value, as backups before history held them.
	l := newStepper(t, vault.DefaultHistory())
	lm := l.do(vault.Write{Kind: vault.Restore, Value: vault.NewSecret([]byte("v")), Meta: vault.Meta{Version: 3, CreatedAt: t0, UpdatedAt: t0}})
	if lm.Version != 3 || l.c.Highest != 3 {
		t.Fatalf("legacy restore: %+v", lm)
	}
}

func TestStepRollbackAfterTheCurrentVersionIsDestroyed(t *testing.T) {
	s := newStepper(t, vault.History{MaxVersions: 10})
	s.do(put("a"))
	s.do(put("b"))
	s.do(vault.Write{Kind: vault.Destroy, Versions: []uint64{2}})
	if _, err := s.try(vault.Write{Kind: vault.Undelete}); !errors.Is(err, vault.ErrNotFound) {
		t.Fatalf("undelete of a name that was not removed: %v", err)
	}
	m := s.do(vault.Write{Kind: vault.Rollback, Version: 1})
	if m.Version != 3 || m.Touch.From != 1 || value(t, s.c, 3) != "a" || !slices.Equal(kept(s.c), []string{"c3", "p1"}) {
		t.Fatalf("rollback: %+v %v", m, kept(s.c))
	}
}

func TestStepDestroyPastKeepDeleted(t *testing.T) {
	s := newStepper(t, vault.History{MaxVersions: 10, KeepDeleted: time.Hour})
	s.do(put("a"))
	s.do(put("b"))
	s.do(vault.Write{Kind: vault.Remove})
	s.now = s.now.Add(2 * time.Hour)
	m := s.do(vault.Write{Kind: vault.Destroy, Versions: []uint64{2}})
	if !m.Touch.Gone || !slices.Equal(m.Touch.Erased, []uint64{1, 2}) || len(s.c.Previous) != 0 || s.c.Deleted() {
		t.Fatalf("destroy past keep_deleted: %+v %v", m.Touch, kept(s.c))
	}
}
