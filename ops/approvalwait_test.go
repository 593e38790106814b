package ops

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/pdp"
)

// awaited is what AwaitApproval returned.
type awaited struct {
	v   ApprovalView
	err error
}

// await runs AwaitApproval on its own goroutine; its answer comes on the
// channel.
func await(ctx context.Context, f *fixture, id string) <-chan awaited {
	ch := make(chan awaited, 1)
	go func() {
		v, err := f.svc.AwaitApproval(ctx, id)
		ch <- awaited{v, err}
	}()
	return ch
}

// TestAwaitApprovalDecided: a wait ends when the approval is decided, on
// the page or relayed, with the decision; a wait on one already decided
// ends at once.
func TestAwaitApprovalDecided(t *testing.T) {
	f, _, _ := approvalFixture(t, "")
	a := mustAsk(t, f, "arca://app/db")
	got := await(context.Background(), f, a.ID)
	if _, err := f.svc.DecideApproval(a.ID, true, pdp.Scope{Uses: 1}, "human:ana", ViaPage); err != nil {
		t.Fatal(err)
	}
	w := <-got
	if w.err != nil || w.v.State != ApprovalApproved || w.v.Approver != "human:ana" || w.v.Scope.Uses != 1 {
		t.Fatalf("await = %+v, %v", w.v, w.err)
	}
	if w := <-await(context.Background(), f, a.ID); w.err != nil || w.v.State != ApprovalApproved {
		t.Fatalf("await again = %+v, %v", w.v, w.err)
	}
}

// TestAwaitApprovalExpired: a wait on a pending approval ends when it
// expires; its approval.expire event is written once.
func TestAwaitApprovalExpired(t *testing.T) {
	f, _, _ := approvalFixture(t, "")
	var clock atomic.Int64
	clock.Store(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano())
	f.svc.now = func() time.Time { return time.Unix(0, clock.Load()).UTC() }
	a := mustAsk(t, f, "arca://app/db")
	got := await(context.Background(), f, a.ID)
	clock.Add(int64(manifest.ApprovalWait))
	f.svc.PendingApprovals() // someone looks: what is past its time expires
	w := <-got
	if w.err != nil || w.v.State != ApprovalExpired {
		t.Fatalf("await = %+v, %v", w.v, w.err)
	}
	if n := strings.Count(f.events.String(), `"event":"approval.expire"`); n != 1 {
		t.Errorf("%d approval.expire events, want 1:\n%s", n, f.events.String())
	}
}

// TestAwaitApprovalContext: ctx ending ends the wait, the approval still
// pending; an id the session does not know is not_found.
func TestAwaitApprovalContext(t *testing.T) {
	f, _, _ := approvalFixture(t, "")
	a := mustAsk(t, f, "arca://app/db")
	ctx, cancel := context.WithCancel(context.Background())
	got := await(ctx, f, a.ID)
	cancel()
	if w := <-got; !errors.Is(w.err, context.Canceled) || w.v.State != ApprovalPending {
		t.Fatalf("await = %+v, %v", w.v, w.err)
	}
	if _, err := f.svc.AwaitApproval(context.Background(), "ap_00000000000000000000000000000000"); CodeOf(err) != manifest.NotFound {
		t.Fatalf("unknown: %v", err)
	}
}
