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
	return s.consultAs(ctx, c, req, c.env, c.ev.Ref, nil)
}

// consultAs is consult asking about env and ref (a use's credential,
// which may not be c's), with the use object when c is a use. An allow
// whose obligations arca cannot fulfil for this op is a deny
// (obligationDenial); the verdict recorded is then a deny with the
// PDP's reason and obligations. A degraded allow has no obligations.
// The grant of the request's key is in the PDP's input, and the verdict
// is then settled against it (settleGrant).
func (s *Service) consultAs(ctx context.Context, c *call, req Request, env, ref string, use *pdp.Use) error {
	if s.decider == nil || !c.spec.ConsultsPDP {
		return nil
	}
	key := grantKey{actor: req.Actor, env: env, ref: ref, use: grantUse(c.op, use)}
	b, err := s.decideAs(ctx, c, pdp.Request{Actor: req.Actor, Attestation: req.Attestation, Op: c.op, Env: env, Ref: ref, Use: use,
		SupportedObligations: manifest.Obligations(), Grant: s.grants.view(key, s.now())})
	return s.settleGrant(c, key, b, err)
}

// decideAs asks the PDP preq and records its verdict on c: nil and the
// grant the allow asks for, or why the request is refused.
func (s *Service) decideAs(ctx context.Context, c *call, preq pdp.Request) (grantBounds, error) {
	p := s.cfg.Serve.PDP
	v, err := s.decider.Decide(ctx, preq)
	var u *pdp.Unreachable
	switch {
	case errors.As(err, &u) && p.AllowOnError && ctx.Err() == nil:
		c.ev.Policy = &audit.Policy{Allow: true, Reason: u.Error(), Degraded: true}
	case err != nil:
		return grantBounds{}, Errorf(manifest.PDPUnreachable, "%v", err)
	case !v.Allow:
		c.ev.Policy = &audit.Policy{Reason: v.Reason, Obligations: v.Obligations}
		if v.Reason == "" {
			return grantBounds{}, Errorf(manifest.Denied, "denied by policy")
		}
		return grantBounds{}, Errorf(manifest.Denied, "denied by policy: %s", v.Reason)
	default:
		b, why := obligationDenial(c.op, v.Obligations)
		if why != "" {
			c.ev.Policy = &audit.Policy{Reason: v.Reason, Obligations: v.Obligations}
			return grantBounds{}, Errorf(manifest.Denied, "denied by policy: %s", why)
		}
		c.ev.Policy = &audit.Policy{Allow: true, Reason: v.Reason, Obligations: v.Obligations}
		return b, nil
	}
	return grantBounds{}, nil
}
