package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Versions, history and compare-and-set (SPEC §11) against a real serve:
// every op of it typed, the *Conflict of an if_version that lost, and no
// value in a result that is not a get's.

const histRef = "arca://app/db"

var histValues = []string{"hist-canary-1", "hist-canary-2", "hist-canary-3"}

// seeded is a client on a fresh home whose histRef holds histValues,
// versions 1 to 3.
func seeded(t *testing.T) *Client {
	t.Helper()
	c := start(t, home(t, ""))
	for _, v := range histValues {
		if _, err := c.Put(context.Background(), Request{Ref: histRef, Value: []byte(v)}); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// noValue fails when x, printed as %+v, holds one of histValues.
func noValue(t *testing.T, what string, x any) {
	t.Helper()
	text := fmt.Sprintf("%+v", x)
	for _, v := range histValues {
		if strings.Contains(text, v) {
			t.Fatalf("%s holds a value", what)
		}
	}
}

// wantNotFound fails unless err is not_found and its message names the version.
func wantNotFound(t *testing.T, what string, err error, version string) {
	t.Helper()
	wantCode(t, what, err, "not_found")
	if !strings.Contains(err.Error(), "version "+version) {
		t.Fatalf("%s: %v, want it to name version %s", what, err, version)
	}
}

func TestHistory(t *testing.T) {
	c, ctx := seeded(t), context.Background()
	h, err := c.History(ctx, Request{Ref: histRef})
	if err != nil {
		t.Fatal(err)
	}
	if h.Ref != histRef || h.Env != "default" || h.Current == nil || *h.Current != 3 || h.MaxVersions != 10 || !h.DeletedAt.IsZero() {
		t.Fatalf("history: %+v", h)
	}
	var got []string
	for _, v := range h.Versions {
		got = append(got, fmt.Sprintf("%d %s", v.Version, v.State))
	}
	if want := []string{"3 current", "2 previous", "1 previous"}; !slices.Equal(got, want) {
		t.Fatalf("history versions %q, want %q", got, want)
	}
	if h.Versions[1].CreatedAt.After(h.Versions[0].CreatedAt) {
		t.Fatalf("version 2 written after version 3: %+v", h.Versions)
	}
	noValue(t, "history", h)
	_, err = c.History(ctx, Request{Ref: "arca://app/never"})
	wantCode(t, "history of a name never written", err, "not_found")
}

func TestGetVersion(t *testing.T) {
	c, ctx := seeded(t), context.Background()
	g, err := c.Get(ctx, Request{Ref: histRef, Version: new(uint64(1))})
	if err != nil {
		t.Fatal(err)
	}
	if string(g.Value.Reveal()) != "hist-canary-1" || g.Version != 1 {
		t.Fatalf("get version 1: version %d", g.Version)
	}
	if s := fmt.Sprint(g.Value); s != "<redacted>" {
		t.Fatalf("a value prints as %q", s)
	}
	_, err = c.Get(ctx, Request{Ref: histRef, Version: new(uint64(9))})
	wantNotFound(t, "get of a version not kept", err, "9")
}

func TestRollback(t *testing.T) {
	c, ctx := seeded(t), context.Background()
	r, err := c.Rollback(ctx, Request{Ref: histRef, Version: new(uint64(1))})
	if err != nil {
		t.Fatal(err)
	}
	if r.Version != 4 || r.RolledBackFrom != 1 || r.Created {
		t.Fatalf("rollback: %+v", r)
	}
	noValue(t, "rollback", r)
	if g, err := c.Get(ctx, Request{Ref: histRef}); err != nil || string(g.Value.Reveal()) != "hist-canary-1" {
		t.Fatalf("get after rollback: %v, not version 1's value", err)
	}
	_, err = c.Rollback(ctx, Request{Ref: histRef, Version: new(uint64(7))})
	wantNotFound(t, "rollback to a version not kept", err, "7")
	_, err = c.Rollback(ctx, Request{Ref: histRef, Version: new(uint64(2)), IfVersion: new(uint64(3))})
	var lost *Conflict
	if !errors.As(err, &lost) || lost.CurrentVersion != 4 {
		t.Fatalf("rollback with a stale if_version: %v, want a *Conflict at version 4", err)
	}
}

func TestUndeleteAndListDeleted(t *testing.T) {
	c, ctx := seeded(t), context.Background()
	if _, err := c.Rm(ctx, Request{Ref: histRef}); err != nil {
		t.Fatal(err)
	}
	_, err := c.Get(ctx, Request{Ref: histRef})
	wantCode(t, "get after rm", err, "not_found")
	if l, err := c.List(ctx, Request{}); err != nil || len(l.Records) != 0 {
		t.Fatalf("list after rm: %v, %+v", err, l.Records)
	}
	l, err := c.List(ctx, Request{Deleted: new(true)})
	if err != nil || len(l.Records) != 1 || l.Records[0].Ref != histRef || l.Records[0].Version != 3 || l.Records[0].DeletedAt.IsZero() {
		t.Fatalf("list deleted: %v, %+v", err, l.Records)
	}
	h, err := c.History(ctx, Request{Ref: histRef})
	if err != nil || h.Current != nil || !h.DeletedAt.Equal(l.Records[0].DeletedAt) || h.Versions[0].State != "deleted" {
		t.Fatalf("history of a deleted name: %v, %+v", err, h)
	}
	u, err := c.Undelete(ctx, Request{Ref: histRef})
	if err != nil || u.Version != 4 || !u.Undeleted {
		t.Fatalf("undelete: %v, %+v", err, u)
	}
	if g, err := c.Get(ctx, Request{Ref: histRef}); err != nil || string(g.Value.Reveal()) != "hist-canary-3" {
		t.Fatalf("get after undelete: %v, not the last value", err)
	}
	_, err = c.Undelete(ctx, Request{Ref: histRef})
	wantCode(t, "undelete of a name not deleted", err, "not_found")
}

func TestDestroy(t *testing.T) {
	c, ctx := seeded(t), context.Background()
	d, err := c.Destroy(ctx, Request{Ref: histRef, Versions: []uint64{1, 2}})
	if err != nil || !slices.Equal(d.Destroyed, []int64{1, 2}) || d.Removed {
		t.Fatalf("destroy 1 and 2: %v, %+v", err, d)
	}
	if h, err := c.History(ctx, Request{Ref: histRef}); err != nil || len(h.Versions) != 1 || h.Versions[0].Version != 3 {
		t.Fatalf("history after destroy: %v, %+v", err, h)
	}
	_, err = c.Destroy(ctx, Request{Ref: histRef, Versions: []uint64{2}})
	wantNotFound(t, "destroy of a version gone", err, "2")
	d, err = c.Destroy(ctx, Request{Ref: histRef})
	if err != nil || !slices.Equal(d.Destroyed, []int64{3}) || !d.Removed {
		t.Fatalf("destroy all: %v, %+v", err, d)
	}
	_, err = c.Get(ctx, Request{Ref: histRef})
	wantCode(t, "get after destroy", err, "not_found")
	// Numbering continues past what was destroyed.
	if p, err := c.Put(ctx, Request{Ref: histRef, Value: []byte("after")}); err != nil || p.Version != 4 {
		t.Fatalf("put after destroy: %v, %+v", err, p)
	}
}

func TestChanges(t *testing.T) {
	c, ctx := seeded(t), context.Background()
	first, err := c.Changes(ctx, Request{})
	if err != nil || len(first.Changes) != 0 || first.Reset || first.Truncated || first.Cursor == "" {
		t.Fatalf("changes without a cursor: %v, %+v", err, first)
	}
	if same, err := c.Changes(ctx, Request{Since: first.Cursor}); err != nil || len(same.Changes) != 0 {
		t.Fatalf("changes with nothing changed: %v, %+v", err, same)
	}
	if _, err := c.Put(ctx, Request{Ref: "arca://app/api", Value: []byte("hist-canary-2")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Rm(ctx, Request{Ref: histRef}); err != nil {
		t.Fatal(err)
	}
	got, err := c.Changes(ctx, Request{Since: first.Cursor})
	if err != nil {
		t.Fatal(err)
	}
	noValue(t, "changes", got)
	var seen []string
	for _, ch := range got.Changes {
		seen = append(seen, fmt.Sprintf("%s %d %s", ch.Ref, ch.Version, ch.State))
	}
	slices.Sort(seen)
	if want := []string{"arca://app/api 1 current", histRef + " 3 deleted"}; !slices.Equal(seen, want) {
		t.Fatalf("changes %q, want %q", seen, want)
	}
	if next, err := c.Changes(ctx, Request{Since: got.Cursor}); err != nil || len(next.Changes) != 0 {
		t.Fatalf("changes from the new cursor: %v, %+v", err, next)
	}
	_, err = c.Changes(ctx, Request{Since: "not-a-cursor"})
	wantCode(t, "changes from a cursor arca did not give", err, "bad_request")
}

func TestIfVersion(t *testing.T) {
	c, ctx := seeded(t), context.Background()
	seen, err := c.Get(ctx, Request{Ref: histRef})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := c.Put(ctx, Request{Ref: histRef, Value: []byte("mine"), IfVersion: new(seen.Version)}); err != nil || p.Version != 4 {
		t.Fatalf("put with the current if_version: %v, %+v", err, p)
	}
	_, err = c.Put(ctx, Request{Ref: histRef, Value: []byte("theirs"), IfVersion: new(seen.Version)})
	var lost *Conflict
	if !errors.As(err, &lost) || lost.CurrentVersion != 4 {
		t.Fatalf("put with a stale if_version: %v, want a *Conflict at version 4", err)
	}
	wantCode(t, "a conflict's *Error", err, "conflict")
	if strings.Contains(fmt.Sprintf("%v %+v", err, lost), "theirs") {
		t.Fatal("a conflict holds the value it refused")
	}
	if g, err := c.Get(ctx, Request{Ref: histRef}); err != nil || string(g.Value.Reveal()) != "mine" {
		t.Fatalf("get after the lost put: %v, not the winner's value", err)
	}
	if p, err := c.Put(ctx, Request{Ref: "arca://app/new", Value: []byte("x"), IfVersion: new(uint64(0))}); err != nil || p.Version != 1 {
		t.Fatalf("put with if_version 0 of a new name: %v, %+v", err, p)
	}
	_, err = c.Rotate(ctx, Request{Ref: "arca://app/none", Value: []byte("x"), IfVersion: new(uint64(2))})
	if !errors.As(err, &lost) || lost.CurrentVersion != 0 {
		t.Fatalf("rotate of no record with if_version 2: %v, want a *Conflict at version 0", err)
	}
}

// Writers racing with one if_version, pipelined on one session: exactly
// one wins, and every other gets a *Conflict naming the winner's version.
func TestIfVersionRace(t *testing.T) {
	c, ctx := seeded(t), context.Background()
	const writers = 20
	errs := make(chan error, writers)
	for i := range writers {
		go func() {
			_, err := c.Put(ctx, Request{Ref: histRef, Value: fmt.Appendf(nil, "racer-%d", i), IfVersion: new(uint64(3))})
			errs <- err
		}()
	}
	won := 0
	for range writers {
		err := <-errs
		var lost *Conflict
		switch {
		case err == nil:
			won++
		case !errors.As(err, &lost) || lost.CurrentVersion != 4:
			t.Fatalf("a racer: %v, want a *Conflict at version 4", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d racers won, want 1", won)
	}
	if h, err := c.History(ctx, Request{Ref: histRef}); err != nil || h.Current == nil || *h.Current != 4 {
		t.Fatalf("history after the race: %v, %+v", err, h)
	}
}
