package mcp

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/opstest"
	"github.com/arca-secrets/arca/vault"
)

// TestRequestExpires: a request past its time answers its wait as
// expired, and is gone: the page finds it no more, takes no value for it,
// and the same ask opens a new one.
func TestRequestExpires(t *testing.T) {
	fix := opstest.New(t, opstest.Options{})
	q := newRequests(fix.Service, func(error) { t.Error("the session was stopped") })
	q.ttl = 0
	k := requestKey{env: "default", ref: "arca://app/late"}
	v, _, fresh, err := q.ask(k, "late")
	if err != nil || !fresh {
		t.Fatalf("ask: %v", err)
	}
	if _, err := q.wait(context.Background(), v.ID); err == nil || !strings.Contains(err.Error(), "no longer open") {
		t.Errorf("wait: %v", err)
	}
	if _, ok := q.Request(v.ID); ok {
		t.Error("the page still finds it")
	}
	if _, err := q.Fulfil(context.Background(), v.ID, vault.NewSecret([]byte("too-late-value"))); err == nil {
		t.Error("a value was taken for it")
	}
	if _, err := fix.Service.Get(context.Background(), ops.Request{Ref: k.ref}); ops.CodeOf(err) != "not_found" {
		t.Errorf("get: %v", err)
	}
	if again, _, fresh, _ := q.ask(k, "late"); !fresh || again.ID == v.ID {
		t.Error("the same ask did not open a new request")
	}
}

// TestRequestWaitEnds: a wait whose context ends says so, and leaves the
// request open for the human; a wait of one about to expire ends when it
// does.
func TestRequestWaitEnds(t *testing.T) {
	fix := opstest.New(t, opstest.Options{})
	q := newRequests(fix.Service, func(error) { t.Error("the session was stopped") })
	v, _, _, err := q.ask(requestKey{env: "default", ref: "arca://app/x"}, "x")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := q.wait(ctx, v.ID); err == nil || !strings.Contains(err.Error(), "ended") {
		t.Errorf("wait: %v", err)
	}
	if pending := q.PendingRequests(); len(pending) != 1 || pending[0].ID != v.ID {
		t.Errorf("pending: %+v", pending)
	}
	q.mu.Lock()
	q.byID[v.ID].view.ExpiresAt = fix.Service.Now().Add(20 * time.Millisecond) // it expires while waited on
	q.mu.Unlock()
	if _, err := q.wait(context.Background(), v.ID); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("wait: %v", err)
	}
}
