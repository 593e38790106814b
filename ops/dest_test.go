package ops

import (
	"context"
	"testing"

	"github.com/arca-secrets/arca/audit"
)

// A get's Dest becomes the message of its ok event; a failed get's message
// is its error, whatever Dest says.
func TestGetDestIsTheOKEventsMessage(t *testing.T) {
	f := newFixture(t, "")
	ctx := context.Background()
	if _, err := f.svc.Put(ctx, Request{Ref: "arca://app/db", Value: secret(canary)}); err != nil {
		t.Fatal(err)
	}
	f.events.Reset()
	if _, err := f.svc.Get(ctx, Request{Ref: "arca://app/db", Dest: "to DB_PASSWORD"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Get(ctx, Request{Ref: "arca://app/nope", Dest: "to DB_PASSWORD"}); err == nil {
		t.Fatal("a get of a missing ref succeeded")
	}
	if _, err := f.svc.Get(ctx, Request{Ref: "arca://app/db"}); err != nil {
		t.Fatal(err)
	}
	ev := f.lines(t)
	if len(ev) != 3 {
		t.Fatalf("%d events, want 3", len(ev))
	}
	if ev[0].Outcome != audit.OK || ev[0].Message != "to DB_PASSWORD" {
		t.Errorf("ok event %+v, want the message %q", ev[0], "to DB_PASSWORD")
	}
	if ev[1].Outcome != audit.NotFound || ev[1].Message != `arca://app/nope not found in env "default"` {
		t.Errorf("failed event %+v, want the error as its message", ev[1])
	}
	if ev[2].Message != "" {
		t.Errorf("a get without Dest has the message %q", ev[2].Message)
	}
}
