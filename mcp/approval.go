package mcp

import (
	"context"
	"errors"
	"time"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A call answered approval_required (SPEC §14) asks the client to send
// its user to the approval's page (elicit.go: URL mode, never a form: the
// page's token is the only way to approve, and no client can approve on
// a human's behalf). The retry that says the user went waits until the
// approval is decided or expires, then runs the op again carrying it: the
// PDP decides again, as it does for serve's retries, and the approval
// binds to the request's fingerprint. A client that cannot send its user
// to a URL, or a session with no page, is answered the tool error with
// details.approval (and its url when the page runs): the caller shows it
// to a human and calls again with the "approval" argument.

// approvalKind is the kind of waiting of a call answered
// approval_required.
const approvalKind = "approval"

// causeDeclined is the cause of the refusal of a retry whose user
// declined to open the approval's page.
const causeDeclined = "approval_declined"

// askApproval is the result that asks r's client to send its user to the
// page of the approval err names; nil when err names none, when the call
// is itself a retry (it is answered, never asked again), or when there is
// no page or the client cannot send its user to one.
func (s *session) askApproval(r *sdk.CallToolRequest, err error, retry bool) *sdk.CallToolResult {
	a := ops.ApprovalOf(err)
	if a == nil || retry || s.page == nil || ops.CodeOf(err) != manifest.ApprovalRequired {
		return nil
	}
	msg := "arca needs a human to approve this call: " + a.Summary + ". Open the page and decide with the approver's token; " +
		"the call goes on once it is decided, and the approval expires at " + a.ExpiresAt.UTC().Format(time.RFC3339) + "."
	return s.askVisit(r, waiting{kind: approvalKind, id: a.ID}, s.page.URL(a.ID), msg)
}

// awaitApproval handles a retry of a call answered approval_required: once
// the approval is decided or has expired, req carries it (retry true) and
// the op runs again. A retry whose user declined to go is denied (cause
// approval_declined), the approval left pending for a later call with the
// "approval" argument; one that carries another kind of waiting, or a
// request state arca did not sign, is bad_request. A wait that ends
// undecided (the call cancelled, the client's input closed) is answered
// approval_required. A call that is no retry is left as it is.
func (s *session) awaitApproval(ctx context.Context, r *sdk.CallToolRequest, req *ops.Request) (retry bool, err error) {
	w, accepted, ok, err := s.resumed(r)
	switch {
	case !ok:
		return false, nil
	case err != nil:
		return true, err
	case w.kind != approvalKind:
		return true, ops.Errorf(manifest.BadRequest, "the request state is not one of this tool's")
	case !accepted:
		return true, s.declined(w.id)
	}
	v, err := s.wait(ctx, w.id)
	if err != nil {
		return true, err
	}
	if canVisit(r) {
		_ = r.Session.NotifyElicitationComplete(ctx, &sdk.ElicitationCompleteParams{ElicitationID: w.id})
	}
	req.Approval = v.ID
	return true, nil
}

// wait waits until the approval id is no longer pending, the call ends
// or the client's input does; an approval still pending then is
// approval_required.
func (s *session) wait(ctx context.Context, id string) (ops.ApprovalView, error) {
	ctx, cancel := s.waitContext(ctx)
	defer cancel()
	v, err := s.svc.AwaitApproval(ctx, id)
	switch {
	case errors.Is(err, ops.ErrAudit):
		s.stop(err) // arca does not act unaudited
		return v, err
	case err != nil && v.State == ops.ApprovalPending:
		return v, &ops.Error{Code: manifest.ApprovalRequired, Msg: "approval required: " + v.Summary + " (still pending when the call ended)", Approval: details(v)}
	}
	return v, err
}

// waitContext is ctx, ended also when the client's input ends: a call
// waiting on a human must not hold the session past it.
func (s *session) waitContext(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-s.inputEnded:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// declined is the refusal of a retry whose user declined to open the
// page of the approval id, naming it, so that a human may still decide
// it and the caller call again with it.
func (s *session) declined(id string) error {
	v, ok := s.svc.Approval(id)
	if !ok {
		return ops.Errorf(manifest.NotFound, "approval %s is not one this session knows", id)
	}
	msg := "denied: the user declined to open the page of approval " + id + " (" + v.State + "); " +
		"once a human approves it there, call again with \"approval\": \"" + id + "\""
	return &ops.Error{Code: manifest.Denied, Msg: msg, Cause: causeDeclined, Approval: details(v)}
}

// details is v as an error's details.approval.
func details(v ops.ApprovalView) *ops.ApprovalDetails {
	return &ops.ApprovalDetails{ID: v.ID, Summary: v.Summary, Fingerprint: v.Fingerprint, ExpiresAt: v.ExpiresAt}
}
