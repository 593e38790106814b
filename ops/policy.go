package ops

import (
	"context"
	"errors"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/pdp"
)

// Decision carries the verdict of the policy decision point on a result,
// when one was consulted. Serve puts it on the response as "policy".
type Decision struct {
	Policy *audit.Policy `json:"-"`
}

// Verdict returns the recorded verdict, nil when the PDP was not consulted.
func (d Decision) Verdict() *audit.Policy { return d.Policy }

// PolicyOf returns the verdict an error carries, nil when none.
func PolicyOf(err error) *audit.Policy {
	var e *Error
	if errors.As(err, &e) {
		return e.Policy
	}
	return nil
}

// consult asks the PDP about c, when this service consults one and the
// config names one. It runs after validation and guardrails, so a doomed
// request never spawns it. A deny, or an unreachable PDP without
// allow_on_error, ends the request; the verdict goes on c's events. A
// decision cut short because ctx was cancelled (serve is stopping) is
// unreachable even with allow_on_error: the PDP did not fail, it was not
// let finish, and a stopping serve must not run an op nobody allowed.
func (s *Service) consult(ctx context.Context, c *call, req Request) error {
	return s.consultAs(ctx, c, req, c.env, c.ev.Ref, nil, req.Approval)
}

// consultAs is consult asking about env and ref (a use's credential,
// which may not be c's), with the use object when c is a use, and the
// approval the request was retried with ("" none; see retried). An
// allow whose obligations arca cannot fulfil for this op is a deny
// (obligationDenial); the verdict recorded is then a deny with the
// PDP's reason and obligations. A degraded allow has no obligations.
// The grant of the request's key and its approval are in the PDP's
// input; the verdict is then settled against them (settleVerdict).
func (s *Service) consultAs(ctx context.Context, c *call, req Request, env, ref string, use *pdp.Use, approvalID string) error {
	p, err := s.ask(ctx, c, req, env, ref, use, approvalID)
	if err != nil || p == nil {
		return err
	}
	return s.settle(ctx, c, p, true)
}

// asking is a PDP's verdict on one question, not yet settled against the
// grant rules.
type asking struct {
	q asked
	v verdict
}

// ask asks the PDP about env and ref for c (see consultAs), the grant of
// the request's key and the approval it was retried with in its input;
// nil when no PDP is consulted.
func (s *Service) ask(ctx context.Context, c *call, req Request, env, ref string, use *pdp.Use, approvalID string) (*asking, error) {
	if s.decider == nil || !c.spec.ConsultsPDP {
		return nil, nil
	}
	now := s.now()
	key := grantKey{actor: req.Actor, env: env, ref: ref, use: grantUse(c.op, use)}
	q := asked{key: key, op: c.op, useName: pdpUseName(use), now: now}
	if !c.spec.Use {
		s.turns.enter(c.turn, key) // a use entered all its credentials' keys (decideUse)
	}
	ap, err := s.retried(c, approvalID, q, now)
	if err != nil {
		return nil, err
	}
	preq := pdp.Request{Actor: req.Actor, Client: req.Client, Attestation: req.Attestation, Op: c.op, Env: env, Ref: ref, Use: use,
		SupportedObligations: manifest.Obligations(), Grant: s.grants.view(key, now)}
	if g := preq.Grant; g != nil && g.State == grantActive {
		q.shown = g.ID
	}
	if ap != nil {
		q.ap = ap
		q.apState, _, preq.Approval = s.approvals.snapshot(ap)
	}
	return &asking{q: q, v: s.decideAs(ctx, c, preq)}, nil
}

// settle settles p once the reads begun before c settled theirs (turns):
// counting a use when count is set; else (a use refused for another of
// its credentials) only opening, with no use counted, the grant an
// approval it was retried with opens, so that the retry after the next
// approval finds it.
func (s *Service) settle(ctx context.Context, c *call, p *asking, count bool) error {
	if err := s.turns.wait(ctx, c.turn, p.q.key); err != nil {
		return Errorf(manifest.OpError, "serve is stopping: the request was not settled")
	}
	if p.q.ap != nil {
		// What the requests settled before it made of the approval, as of
		// now: the grant it opened, if one did.
		_, p.q.apGrant, _ = s.approvals.snapshot(p.q.ap)
	}
	if !count {
		return s.reserveApproved(c, p.q, p.v)
	}
	return s.settleVerdict(c, p.q, p.v)
}

// pdpUseName is the name of the service or action a use names, "" for
// an op that is no use.
func pdpUseName(u *pdp.Use) string {
	if u == nil {
		return ""
	}
	return u.Name
}

// verdict is what decideAs made of the PDP's answer: the grant an allow
// asks for, or why the request is refused, and whether a deny said a
// human may approve it (arca:approval).
type verdict struct {
	bounds      grantBounds
	refused     error
	askApproval bool
}

// decideAs asks the PDP preq and records its verdict on c.
func (s *Service) decideAs(ctx context.Context, c *call, preq pdp.Request) verdict {
	p := s.cfg.Serve.PDP
	v, err := s.decider.Decide(ctx, preq)
	var u *pdp.Unreachable
	switch {
	case errors.As(err, &u) && p.AllowOnError && ctx.Err() == nil:
		c.ev.Policy = &audit.Policy{Allow: true, Reason: u.Error(), Degraded: true}
	case err != nil:
		return verdict{refused: Errorf(manifest.PDPUnreachable, "%v", err)}
	case !v.Allow:
		c.ev.Policy = &audit.Policy{Reason: v.Reason, Obligations: v.Obligations}
		ask := asksApproval(v.Obligations)
		if v.Reason == "" {
			return verdict{refused: Errorf(manifest.Denied, "denied by policy"), askApproval: ask}
		}
		return verdict{refused: Errorf(manifest.Denied, "denied by policy: %s", v.Reason), askApproval: ask}
	default:
		b, why := obligationDenial(c.op, v.Obligations)
		if why != "" {
			c.ev.Policy = &audit.Policy{Reason: v.Reason, Obligations: v.Obligations}
			return verdict{refused: Errorf(manifest.Denied, "denied by policy: %s", why)}
		}
		c.ev.Policy = &audit.Policy{Allow: true, Reason: v.Reason, Obligations: v.Obligations}
		return verdict{bounds: b}
	}
	return verdict{}
}
