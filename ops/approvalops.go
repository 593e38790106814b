package ops

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/pdp"
)

// ApprovalResult is the result of approve and approval: the approval's
// id and state, when a pending one expires, and once it is approved who
// approved it and the scope granted.
type ApprovalResult struct {
	Approval  string     `json:"approval"`
	State     string     `json:"state"`
	ExpiresAt *Time      `json:"expires_at,omitempty"`
	Approver  string     `json:"approver,omitempty"`
	Scope     *pdp.Scope `json:"scope,omitempty"`
}

// Verdict is nil: approve and approval consult no PDP.
func (ApprovalResult) Verdict() *audit.Policy { return nil }

func approvalResult(v ApprovalView) ApprovalResult {
	r := ApprovalResult{Approval: v.ID, State: v.State, Approver: v.Approver}
	switch v.State {
	case ApprovalPending:
		r.ExpiresAt = &Time{Time: v.ExpiresAt}
	case ApprovalApproved:
		sc := v.Scope
		r.Scope = &sc
	}
	return r
}

// badApprovalID is the refusal of an approval id of the wrong shape.
const badApprovalID = "approval must be \"ap_\" and 32 lowercase hex digits, as details.approval.id gave it"

// Via of a decision: relayed by the host (the approve op) or made on the
// approval page.
const (
	ViaOp   = "op"
	ViaPage = "page"
)

// Approve records the decision req relays (the approve op): its
// approval, decision ("grant" or "deny"), approver and, for a grant, its
// scope. It writes the approval.decide event and returns the approval's
// new state, with the message of the op's own event.
func (s *Service) Approve(req Request) (ApprovalResult, string, error) {
	if !validID(req.Approval, "ap_") {
		return ApprovalResult{}, "", Errorf(manifest.BadRequest, badApprovalID)
	}
	grant := req.Decision == "grant"
	if !grant && req.Decision != "deny" {
		return ApprovalResult{}, "", Errorf(manifest.BadRequest, "decision must be \"grant\" or \"deny\"")
	}
	if !ValidActor(req.Approver) {
		return ApprovalResult{}, "", Errorf(manifest.BadRequest, "approver must be at most %d bytes of UTF-8 without control characters", manifest.MaxActor)
	}
	sc, err := parseScope(req.Scope)
	switch {
	case err != nil:
		return ApprovalResult{}, "", err
	case !grant && req.Scope != nil:
		return ApprovalResult{}, "", Errorf(manifest.BadRequest, "scope goes with decision \"grant\", not \"deny\"")
	}
	v, err := s.DecideApproval(req.Approval, grant, sc, req.Approver, ViaOp)
	if err != nil {
		return ApprovalResult{}, "", err
	}
	return approvalResult(v), "approval " + v.ID + " " + v.State, nil
}

// ApprovalState returns the state of the approval req names (the
// approval op); an approval this session does not know is not_found.
func (s *Service) ApprovalState(req Request) (ApprovalResult, string, error) {
	if !validID(req.Approval, "ap_") {
		return ApprovalResult{}, "", Errorf(manifest.BadRequest, badApprovalID)
	}
	v, ok := s.Approval(req.Approval)
	if !ok {
		return ApprovalResult{}, "", Errorf(manifest.NotFound, "approval %s is not one this session knows", req.Approval)
	}
	return approvalResult(v), "approval " + v.ID + " " + v.State, nil
}

// DecideApproval records a decision on the pending approval id, made on
// the page (via ViaPage) or relayed (ViaOp), and writes its
// approval.decide event. A decision stands once made; should its event
// not be written, the audit's failure is returned (and serve stops).
func (s *Service) DecideApproval(id string, grant bool, sc pdp.Scope, approver, via string) (ApprovalView, error) {
	a, expired, err := s.approvals.decide(id, grant, sc, approver, via, s.now())
	c := &call{flush: via == ViaPage} // the page's events go out at once: no answer of serve's carries them
	if werr := s.writeExpired(c, expired); werr != nil {
		return ApprovalView{}, werr
	}
	if err != nil {
		return ApprovalView{}, err
	}
	ev := audit.Event{Event: "approval.decide", Op: a.op, Outcome: audit.OK, Actor: a.key.actor, Env: a.key.env, Ref: a.key.ref,
		Approval: &audit.Approval{ID: a.id, Fingerprint: a.fingerprint, Decision: "deny", Approver: approver, Via: via}}
	if grant {
		ev.Approval.Decision, ev.Approval.Uses, ev.Approval.TTLS = "grant", sc.Uses, sc.TTLS
	}
	if err := s.writeFor(c, ev); err != nil {
		return ApprovalView{}, err
	}
	return a.view(), nil
}

// PendingApprovals returns this session's pending approvals, soonest to
// expire first (the page's list).
func (s *Service) PendingApprovals() []ApprovalView {
	vs, expired := s.approvals.pendingViews(s.now())
	_ = s.writeExpired(&call{flush: true}, expired) // a failed write ends serve at its next request
	return vs
}

// Approval returns the approval id, and whether this session knows it.
func (s *Service) Approval(id string) (ApprovalView, bool) {
	v, ok, expired := s.approvals.state(id, s.now())
	_ = s.writeExpired(&call{flush: true}, expired) // a failed write ends serve at its next request
	return v, ok
}

// parseScope reads an approve's scope: nil (not sent) is the rest of the
// session; else an object of at most uses (1–10000) and ttl_s (1–86400),
// whole numbers, each once, its keys exactly these.
func parseScope(raw []byte) (pdp.Scope, error) {
	if raw == nil {
		return pdp.Scope{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var fields map[string]json.Number
	if err := dec.Decode(&fields); err != nil || fields == nil {
		return pdp.Scope{}, Errorf(manifest.BadRequest, "scope must be an object of uses and ttl_s, whole numbers (%s)", scopeProblem(err))
	}
	var out pdp.Scope
	seen := 0
	for _, f := range []struct {
		name  string
		limit int
		dst   *int
	}{{"uses", maxGrantUses, &out.Uses}, {"ttl_s", maxGrantTTL, &out.TTLS}} {
		n, ok := fields[f.name]
		if !ok {
			continue
		}
		seen++
		v, err := strconv.Atoi(n.String())
		if err != nil || v < 1 || v > f.limit {
			return pdp.Scope{}, Errorf(manifest.BadRequest, "scope.%s must be 1 to %d", f.name, f.limit)
		}
		*f.dst = v
	}
	if seen != len(fields) || duplicateKey(raw) {
		return pdp.Scope{}, Errorf(manifest.BadRequest, "scope must be an object of uses and ttl_s, whole numbers (its keys exactly these, each once)")
	}
	return out, nil
}

// duplicateKey reports whether the object raw (a valid one) names a key
// twice; encoding/json would keep the last.
func duplicateKey(raw []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(raw))
	seen := map[string]bool{}
	if _, err := dec.Token(); err != nil {
		return true
	}
	for dec.More() {
		k, err := dec.Token()
		name, ok := k.(string)
		if err != nil || !ok || seen[name] {
			return true
		}
		seen[name] = true
		if _, err := dec.Token(); err != nil { // a number: the scope has no nesting
			return true
		}
	}
	return false
}

// scopeProblem says briefly what was wrong with a scope.
func scopeProblem(err error) string {
	if err == nil {
		return "it is not an object"
	}
	msg, _, _ := strings.Cut(err.Error(), " into Go")
	return strings.TrimPrefix(msg, "json: ")
}
