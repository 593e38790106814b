package ops

import (
	"strconv"
	"strings"
	"time"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops/config"
	"github.com/arca-secrets/arca/pdp"
)

// asked is one question to the PDP as the grant and approval rules see
// it: its grant key, op and use's name, when it was asked, the grant the
// PDP was shown active ("" none), and the approval it was retried with
// (nil none): its state as the PDP saw it, and the grant it opened as of
// settling.
type asked struct {
	key         grantKey
	op, useName string
	now         time.Time
	shown       string
	ap          *approval
	apState     string
	apGrant     *grant
}

// retried returns the approval a request was retried with (nil when id is
// "", one validate checked the shape of), after writing the
// approval.expire events of those past their time. One this session does
// not know, or one for another request (fingerprint), is denied.
func (s *Service) retried(c *call, id string, q asked, now time.Time) (*approval, error) {
	if id == "" {
		return nil, s.writeExpired(c, s.approvals.expire(now))
	}
	a, expired := s.approvals.lookup(id, now)
	if err := s.writeExpired(c, expired); err != nil {
		return nil, err
	}
	c.ev.Approval = &audit.Approval{ID: id}
	switch {
	case a == nil:
		return nil, &Error{Code: manifest.Denied, Msg: "denied: approval " + id + " is not one this session knows", Cause: "approval_unknown"}
	case a.fingerprint != q.fingerprint():
		return nil, &Error{Code: manifest.Denied, Msg: "denied: approval " + id + " is for another request", Cause: "approval_mismatch"}
	}
	return a, nil
}

// fingerprint is q's fingerprint, worked out only when an approval needs
// it.
func (q asked) fingerprint() string {
	return fingerprint(q.key.actor, q.op, q.key.env, q.key.ref, q.useName)
}

// settleVerdict applies the grant and approval rules to the PDP's verdict
// v on q (see grants.settle): a spent grant denies; a deny that asks for
// approval is answered approval_required (askApproval), or, retried with
// an approval a human denied or let expire, denied; an allow retried with
// an approved approval opens a grant no wider than its scope, once.
func (s *Service) settleVerdict(c *call, q asked, v verdict) error {
	rule := openByPDP
	if s.cfg.Serve.Grants.Renew == config.RenewApproval {
		rule = openOnce
	}
	if v.refused == nil && q.apState == ApprovalApproved {
		if q.apGrant == nil && s.approvals.claim(q.ap) {
			rule, v.bounds = openByApproval, v.bounds.within(q.ap.scope)
		} else if q.apGrant == nil {
			denyRecorded(c)
			return &Error{Code: manifest.Denied, Msg: "denied: approval " + q.ap.id + " already opened its grant", Cause: "grant_exhausted"}
		} else if closed := s.grants.closedState(q.apGrant); closed != "" {
			c.ev.Grant = q.apGrant.id
			denyRecorded(c)
			return &Error{Code: manifest.Denied, Msg: "denied: the grant approval " + q.ap.id + " opened is " + closed, Cause: "grant_" + closed}
		}
	}
	st := s.grants.settle(q.key, q.now, v.refused == nil, v.bounds, rule, q.shown)
	if st.closed != "" {
		if st.closedNow {
			if err := s.writeGrant(c, grantEvent(c, q.key, "grant.close", st.closedID, st.closed)); err != nil {
				return err
			}
		}
		if st.opened == nil {
			c.ev.Grant = st.closedID
			denyRecorded(c)
			return &Error{Code: manifest.Denied, Msg: "denied: grant " + st.closed, Cause: "grant_" + st.closed}
		}
	}
	switch {
	case v.refused != nil && v.askApproval:
		return s.onApprovalDeny(c, q, v.refused)
	case v.refused != nil:
		return v.refused
	case st.needsApproval:
		denyRecorded(c)
		return s.askApproval(c, q, "renewing a grant needs an approval ([serve.grants] renew = \"approval\")")
	}
	if st.opened != nil {
		if err := s.writeGrant(c, grantEvent(c, q.key, "grant.open", st.id, "")); err != nil {
			return err
		}
		if rule == openByApproval {
			s.approvals.bind(q.ap, st.opened)
		}
	}
	if st.id != "" {
		c.ev.Grant, c.grantExpires = st.id, st.expiresAt
	}
	return nil
}

// denyRecorded records c's verdict, an allow the grant rules turned
// into a refusal, as the deny it became: reason and obligations kept.
func denyRecorded(c *call) {
	if p := c.ev.Policy; p != nil && p.Allow {
		c.ev.Policy = &audit.Policy{Reason: p.Reason, Obligations: p.Obligations, Degraded: p.Degraded}
	}
}

// reserveApproved opens, with no use counted, the grant an approved
// approval q was retried with opens (see settleVerdict), when q's
// verdict allows, the approval opened none yet and the key has none
// open; else it does nothing.
func (s *Service) reserveApproved(c *call, q asked, v verdict) error {
	if v.refused != nil || q.apState != ApprovalApproved || q.apGrant != nil || !s.approvals.claim(q.ap) {
		return nil
	}
	g := s.grants.openIdle(q.key, q.now, v.bounds.within(q.ap.scope))
	if g == nil {
		s.approvals.unclaim(q.ap) // the key has a grant open: the next retry runs under it, or opens one
		return nil
	}
	s.approvals.bind(q.ap, g)
	return s.writeGrant(c, grantEvent(c, q.key, "grant.open", g.id, ""))
}

// grantEvent is a grant.open or grant.close event of c's request for key.
func grantEvent(c *call, key grantKey, event, id, closed string) audit.Event {
	return audit.Event{Event: event, Op: c.op, Outcome: audit.OK, Actor: key.actor, Env: key.env, Ref: key.ref, Grant: id, Message: closed}
}

// onApprovalDeny answers a deny that says a human may approve: retried
// with an approval a human denied or let expire it stays denied (with
// that cause); retried with one still pending, the same approval is
// named again; retried with an approved one, the PDP decided again and
// its deny stands; else an approval is asked for.
func (s *Service) onApprovalDeny(c *call, q asked, refused error) error {
	switch q.apState {
	case ApprovalDenied:
		return &Error{Code: manifest.Denied, Msg: "denied: approval " + q.ap.id + " was denied", Cause: "approval_denied"}
	case ApprovalExpired:
		return &Error{Code: manifest.Denied, Msg: "denied: approval " + q.ap.id + " expired undecided; send the request again without it to ask anew", Cause: "approval_expired"}
	case ApprovalApproved:
		return refused
	}
	reason := ""
	if p := c.ev.Policy; p != nil {
		reason = p.Reason
	}
	return s.askApproval(c, q, reason)
}

// askApproval answers q approval_required: with the pending approval of
// its fingerprint, or a new one (its approval.request event written);
// with MaxPending pending, denied (approvals_full).
func (s *Service) askApproval(c *call, q asked, reason string) error {
	a, opened, full := s.approvals.ask(&approval{fingerprint: q.fingerprint(), op: q.op, key: q.key, reason: reason, summary: summary(q)}, q.now)
	if full {
		return &Error{Code: manifest.Denied, Msg: "denied: this session already has " + strconv.Itoa(manifest.MaxPending) + " approvals pending", Cause: "approvals_full"}
	}
	if opened {
		ev := audit.Event{Event: "approval.request", Op: q.op, Outcome: audit.OK, Actor: q.key.actor, Env: q.key.env, Ref: q.key.ref,
			Message: a.summary, Approval: &audit.Approval{ID: a.id, Fingerprint: a.fingerprint}}
		if err := s.writeGrant(c, ev); err != nil {
			return err
		}
	}
	c.ev.Approval = &audit.Approval{ID: a.id}
	return &Error{Code: manifest.ApprovalRequired, Msg: "approval required: " + a.summary,
		Approval: &ApprovalDetails{ID: a.id, Summary: a.summary, Fingerprint: a.fingerprint, ExpiresAt: a.expiresAt}}
}

// summary says what q asks, in a human's words: who (the actor quoted,
// control and format characters escaped, so that no claim can pass for
// the rest of the summary), which op, on what.
func summary(q asked) string {
	var b strings.Builder
	who := "a caller that names no actor"
	if q.key.actor != "" {
		who = strconv.Quote(q.key.actor) // what the caller claims, never words of arca's
	}
	b.WriteString(who + " asks to " + q.op)
	if name, ok := strings.CutPrefix(q.key.use, q.op+":"); ok {
		kind := "service"
		if q.op == "exec" {
			kind = "action"
		}
		b.WriteString(" with " + kind + " " + name + " using")
	}
	if q.key.ref != "" {
		b.WriteString(" " + q.key.ref)
	}
	b.WriteString(" in env " + q.key.env)
	return b.String()
}

// writeExpired writes an approval.expire event for each of expired.
func (s *Service) writeExpired(c *call, expired []*approval) error {
	for _, a := range expired {
		ev := audit.Event{Event: "approval.expire", Op: a.op, Outcome: audit.OK, Actor: a.key.actor, Env: a.key.env, Ref: a.key.ref,
			Message: "expired undecided", Approval: &audit.Approval{ID: a.id, Fingerprint: a.fingerprint}}
		if err := s.writeGrant(c, ev); err != nil {
			return err
		}
	}
	return nil
}

// within is b narrowed to an approval's scope: each bound the smaller of
// the two, a bound only one gives kept.
func (b grantBounds) within(sc pdp.Scope) grantBounds {
	if sc.Uses > 0 && (b.maxUses == 0 || sc.Uses < b.maxUses) {
		b.maxUses = sc.Uses
	}
	if sc.TTLS > 0 && (b.ttl == 0 || sc.TTLS < b.ttl) {
		b.ttl = sc.TTLS
	}
	return b
}
