package ops

import (
	"context"
	"time"

	"github.com/arca-secrets/arca/manifest"
)

// AwaitApproval waits until the approval id is no longer pending: decided
// (on the page, or relayed by approve), or expired undecided (its
// approval.expire event written), and returns it as it then is. It wakes
// when a decision is recorded and when the approval's time is up; ctx
// ending ends the wait with ctx's error and the approval as it then is.
// An approval this session does not know is not_found.
func (s *Service) AwaitApproval(ctx context.Context, id string) (ApprovalView, error) {
	for {
		v, ok, changed, expired := s.approvals.watch(id, s.now())
		if err := s.writeExpired(&call{flush: true}, expired); err != nil {
			return v, err
		}
		switch {
		case !ok:
			return v, Errorf(manifest.NotFound, "approval %s is not one this session knows", id)
		case v.State != ApprovalPending:
			return v, nil
		}
		timer := time.NewTimer(v.ExpiresAt.Sub(s.now()))
		select {
		case <-changed:
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return v, ctx.Err()
		}
		timer.Stop()
	}
}

// watch returns id's view, whether the session knows it, and a channel
// closed when any approval next stops being pending, after expiring
// those past their time (expired: for their events).
func (as *approvals) watch(id string, now time.Time) (v ApprovalView, ok bool, changed <-chan struct{}, expired []*approval) {
	as.mu.Lock()
	defer as.mu.Unlock()
	expired = as.expireLocked(now)
	a := as.byID[id]
	if a == nil {
		return ApprovalView{}, false, nil, expired
	}
	if as.changed == nil {
		as.changed = make(chan struct{})
	}
	return a.view(), true, as.changed, expired
}
