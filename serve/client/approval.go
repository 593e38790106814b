package client

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Approval is the approval serve asked for when it answered
// approval_required (its details.approval): what a human decides on.
type Approval struct {
	ID          string    `json:"id"`
	Summary     string    `json:"summary"`     // what is asked, in words: never a value
	Fingerprint string    `json:"fingerprint"` // SHA-256 over actor, op, env, ref and use, in hex
	ExpiresAt   time.Time `json:"expires_at"`  // when it expires, a deny, unless decided
	URL         string    `json:"url"`         // the approval page's, "" when serve runs none
}

// ApprovalRequired is the error of a request a human must approve first:
// serve answered it at once with code approval_required. Retry the request
// with Request.Approval set to Approval.ID once the approval is approved
// (WithApproval does all of it). errors.As finds the *Error beneath it too.
type ApprovalRequired struct {
	Approval
	Err *Error // serve's error
}

func (e *ApprovalRequired) Error() string { return e.Err.Error() + " (approval " + e.ID + ")" }

// Unwrap is serve's *Error.
func (e *ApprovalRequired) Unwrap() error { return e.Err }

// ApprovalState is the result of approve and approval: an approval's state
// (pending, approved, denied or expired), while pending when it expires,
// once approved who approved it and the scope granted.
type ApprovalState struct {
	Approval  string    `json:"approval"`
	State     string    `json:"state"`
	ExpiresAt time.Time `json:"expires_at"` // zero but while pending
	Approver  string    `json:"approver"`
	Scope     *Scope    `json:"scope"` // nil but once approved
}

// The states of an approval.
const (
	StatePending  = "pending"
	StateApproved = "approved"
	StateDenied   = "denied"
	StateExpired  = "expired"
)

// ErrNotApproved is what the error of WithApproval wraps when the approval
// it waited for was denied or expired.
var ErrNotApproved = errors.New("not approved")

// ApprovalDenied is the error of WithApproval when the approval was denied
// or expired: State says which.
type ApprovalDenied struct {
	Approval
	State string
}

func (e *ApprovalDenied) Error() string {
	return fmt.Sprintf("client: approval %s was %s", e.ID, e.State)
}

// Unwrap is ErrNotApproved.
func (e *ApprovalDenied) Unwrap() error { return ErrNotApproved }

// ApprovalWait says how WithApproval waits. The zero value polls every
// second on the wall clock.
type ApprovalWait struct {
	Interval time.Duration // between polls of the approval op (default 1 s)
	// Now and Sleep are the clock (default time.Now, and a sleep that ends
	// with ctx): a test passes its own and never sleeps.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
}

// WithApproval runs call with approval "", and when it fails with
// *ApprovalRequired waits for a human's decision: it polls the approval op
// every w.Interval until the state is no longer pending, for no longer
// than the approval's ExpiresAt and ctx (its deadline read on w.Now)
// allow. Approved, it runs call once
// more with the approval's id (which call puts in Request.Approval) and
// returns what that returns; denied or expired, it returns
// *ApprovalDenied. Any other error is returned as it is.
func WithApproval[T any](ctx context.Context, c *Client, w ApprovalWait, call func(ctx context.Context, approval string) (T, error)) (T, error) {
	v, err := call(ctx, "")
	var req *ApprovalRequired
	if !errors.As(err, &req) {
		return v, err
	}
	if err := c.awaitApproval(ctx, w, req.Approval); err != nil {
		return v, err
	}
	return call(ctx, req.ID)
}

// awaitApproval polls a until it is decided: nil when it is approved.
func (c *Client) awaitApproval(ctx context.Context, w ApprovalWait, a Approval) error {
	if w.Interval <= 0 {
		w.Interval = time.Second
	}
	if w.Now == nil {
		w.Now = time.Now
	}
	if w.Sleep == nil {
		w.Sleep = sleep
	}
	for {
		s, err := c.Approval(ctx, Request{Approval: a.ID})
		if err != nil {
			return err
		}
		switch {
		case s.State == StateApproved:
			return nil
		case s.State != StatePending:
			return &ApprovalDenied{Approval: a, State: s.State}
		}
		now, end := w.Now(), a.ExpiresAt
		if !s.ExpiresAt.IsZero() {
			end = s.ExpiresAt
		}
		if !now.Before(end) {
			return &ApprovalDenied{Approval: a, State: StateExpired}
		}
		d := min(w.Interval, end.Sub(now))
		if dl, ok := ctx.Deadline(); ok {
			if !now.Before(dl) {
				return context.DeadlineExceeded
			}
			d = min(d, dl.Sub(now))
		}
		if err := w.Sleep(ctx, d); err != nil {
			return err
		}
	}
}

// sleep waits d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
