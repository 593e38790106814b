package ops

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops/ref"
	"github.com/arca-secrets/arca/pdp"
	"github.com/arca-secrets/arca/vault"
)

// A use (SPEC §13) is an op that uses a credential on the caller's behalf
// and answers only the outcome: http (a request to a configured service)
// and exec (a configured action), and each request through serve's proxy.
// Everything about where it goes and what it carries comes from the
// config: the request names a service or an action, never a host, a
// command or a credential.
//
// A use goes: its fields; the service or action it names (unknown:
// bad_request); what it asks of it (a header that carries credentials or
// routing, an argument the action does not allow: bad_request; a method
// or path the service does not allow: denied); then, for each credential
// it would use, in order, the guardrails and the PDP, asked as the op on
// that credential's ref with the use object; the credentials read; the
// use made. Its one event names the first credential's ref and version
// and what the use did (audit.Use), never a header value, query, body or
// output. Its outcome is scrubbed against the credentials and every value
// the session released (Request.Scrub) when its event is written.

// use runs the use op on req (see Service.Read: its event held).
func (s *Service) use(ctx context.Context, op manifest.OpSpec, req Request, held *heldEvent) (Result, error) {
	if row, ok := manifest.Op(op.Name); !ok || row != op {
		c := call{op: op.Name, ev: audit.Event{Op: op.Name, ID: req.ID}, held: held}
		return nil, s.fail(&c, Errorf(manifest.UnknownOp, "%q is not a use", op.Name))
	}
	switch op.Name {
	case "http":
		return s.httpUse(ctx, op, req, held)
	case "exec":
		return s.execUse(ctx, op, req, held)
	}
	c := call{op: op.Name, ev: audit.Event{Op: op.Name, ID: req.ID}, held: held}
	return nil, s.fail(&c, Errorf(manifest.UnknownOp, "%q is not a use ops runs", op.Name))
}

// useCred is one credential a use needs: its ref, routed to its env, and
// what it is for (the variable of an action's environment, or "secret"
// and "user" of a service).
type useCred struct {
	slot string
	ref  ref.Ref
	env  string
}

// used is a credential read for a use.
type used struct {
	useCred
	value   vault.Secret
	version uint64
}

// useVia is how a use came: the op, or a request through the proxy.
const (
	viaOp    = "op"
	viaProxy = "proxy"
)

// beginUse validates req as the use op, resolves what it names with
// target, and decides it: guardrails and the PDP for each credential, in
// order. It returns the call (its event's use fields set) and the
// credentials read. A refusal is audited (into held, when set).
func (s *Service) beginUse(ctx context.Context, op manifest.OpSpec, req Request, held *heldEvent, via string,
	target func(c *call, req *Request) ([]useCred, *pdp.Use, error)) (call, []used, error) {
	c, err := s.validated(op, req, held)
	if err != nil {
		return call{}, nil, err
	}
	c.ev.Use = &audit.Use{Via: via}
	creds, u, err := target(&c, &req)
	if err != nil {
		return call{}, nil, s.fail(&c, err)
	}
	u.Via = via
	for i := range creds {
		env, err := s.cfg.ResolveEnv(creds[i].ref.Env, req.Env, s.ctxEnv)
		if err != nil {
			return call{}, nil, s.fail(&c, err)
		}
		creds[i].env = env
	}
	if len(creds) == 0 {
		// An action whose env names no ref: decided once, on its env.
		env, err := s.cfg.ResolveEnv("", req.Env, s.ctxEnv)
		if err != nil {
			return call{}, nil, s.fail(&c, err)
		}
		c.env, c.ev.Env = env, env
		if err := s.decideUse(ctx, &c, req, []useCred{{env: env}}, u); err != nil {
			return call{}, nil, s.fail(&c, err)
		}
		return c, nil, nil
	}
	c.ref, c.env, c.ev.Env, c.ev.Ref = creds[0].ref, creds[0].env, creds[0].env, creds[0].ref.Path()
	if err := s.decideUse(ctx, &c, req, creds, u); err != nil {
		return call{}, nil, s.fail(&c, err)
	}
	got, err := s.readCreds(ctx, &c, creds)
	if err != nil {
		return call{}, nil, s.fail(&c, err)
	}
	c.ev.Version = got[0].version
	return c, got, nil
}

// decideUse applies the guardrails and asks the PDP for each credential,
// as op on its ref (none: a credential of the zero ref, on its env
// alone); the first refusal ends it. The verdict kept is the
// last one asked.
func (s *Service) decideUse(ctx context.Context, c *call, req Request, creds []useCred, u *pdp.Use) error {
	defer s.turns.release(c.turn) // every credential settled: the reads behind it may settle theirs
	keys := make([]grantKey, len(creds))
	for i, cr := range creds {
		keys[i] = grantKey{actor: req.Actor, env: cr.env, ref: cr.ref.Path(), use: grantUse(c.op, u)}
	}
	s.turns.enter(c.turn, keys...)
	for _, cr := range creds {
		if reason, denied := s.cfg.Guardrail(cr.env, c.op, cr.ref.Path(), req.Actor); denied {
			return Errorf(manifest.Denied, "denied by guardrail: %s", reason)
		}
		if err := s.canOpen(cr.env); err != nil {
			return err
		}
	}
	apFor := -1 // the credential the approval the request carries is for
	if req.Approval != "" {
		apFor = 0
		for i, cr := range creds {
			if fingerprint(req.Actor, c.op, cr.env, cr.ref.Path(), u.Name) == s.approvals.fingerprintOf(req.Approval) {
				apFor = i
			}
		}
	}
	// Each credential is asked about once, in order, the first refusal
	// ending it; the uses are counted only once every one is allowed.
	var allowed []*asking
	asked := map[[2]string]bool{}
	for i, cr := range creds {
		if k := [2]string{cr.env, cr.ref.Path()}; asked[k] {
			continue // an action that names a credential twice uses it once
		} else {
			asked[k] = true
		}
		ap := ""
		if i == apFor {
			ap = req.Approval
		}
		p, err := s.ask(ctx, c, req, cr.env, cr.ref.Path(), u, ap)
		switch {
		case err != nil:
			return err
		case p == nil:
			continue
		case p.v.refused != nil:
			for _, a := range allowed {
				if err := s.settle(ctx, c, a, false); err != nil {
					return err
				}
			}
			return s.settle(ctx, c, p, true)
		}
		allowed = append(allowed, p)
	}
	for _, p := range allowed {
		if err := s.settle(ctx, c, p, true); err != nil {
			return err
		}
	}
	return nil
}

// readCreds reads each credential from its env's vault. A credential
// that is not there is not_found, named by its ref, never its value.
func (s *Service) readCreds(ctx context.Context, c *call, creds []useCred) ([]used, error) {
	out := make([]used, 0, len(creds))
	for _, cr := range creds {
		st, err := s.store(cr.env)
		var rec vault.Record
		if err == nil {
			rec, err = st.Get(ctx, cr.ref.Path())
		}
		switch {
		case errors.Is(err, vault.ErrNotFound):
			return nil, Errorf(manifest.NotFound, "credential %s of %s %q is not in env %q", cr.ref.Canonical(), useKind(c.op), useName(c), cr.env)
		case err != nil:
			return nil, asError(err)
		}
		out = append(out, used{useCred: cr, value: rec.Value, version: rec.Version})
	}
	return out, nil
}

// useKind names what op uses, for messages.
func useKind(op string) string {
	if op == "exec" {
		return "action"
	}
	return "service"
}

// useName is the service or action c's use names.
func useName(c *call) string {
	if c.ev.Use == nil {
		return ""
	}
	if c.ev.Use.Action != "" {
		return c.ev.Use.Action
	}
	return c.ev.Use.Service
}

// unknownUse is the refusal of a service or action the config does not
// have, naming those it has.
func unknownUse(kind, name string, have []string) error {
	slices.Sort(have)
	list := "none is configured"
	if len(have) > 0 {
		list = "configured: " + strings.Join(have, ", ")
	}
	return Errorf(manifest.BadRequest, "unknown %s %q (%s)", kind, name, list)
}

// parseCredRef parses a credential ref from the config, which validated it.
func parseCredRef(kind, name, s string) (ref.Ref, error) {
	r, err := ref.Parse(s)
	if err != nil {
		return ref.Ref{}, Errorf(manifest.OpError, "%s %q: credential: %v", kind, name, err)
	}
	return r, nil
}

// upstreamFailed is the error of a use that could not reach its service
// or run its action to the end, with its cause.
func upstreamFailed(cause, format string, args ...any) *Error {
	return &Error{Code: manifest.UpstreamFailed, Msg: fmt.Sprintf(format, args...), Cause: cause}
}

// ServiceDocs lists the configured services as the manifest's use
// capability shows them, by name: never a credential or a host.
func (c *Config) ServiceDocs() []manifest.ServiceDoc {
	var out []manifest.ServiceDoc
	for _, name := range slices.Sorted(maps.Keys(c.Services)) {
		sc := c.Services[name]
		out = append(out, manifest.ServiceDoc{Name: name, Methods: slices.Clone(sc.Methods), Paths: slices.Clone(sc.Paths)})
	}
	return out
}

// ActionDocs lists the configured actions as the manifest's use
// capability shows them, by name: never the command or its env.
func (c *Config) ActionDocs() []manifest.ActionDoc {
	var out []manifest.ActionDoc
	for _, name := range slices.Sorted(maps.Keys(c.Actions)) {
		ac := c.Actions[name]
		out = append(out, manifest.ActionDoc{Name: name, Args: ac.Args, MaxArgs: ac.MaxArgs})
	}
	return out
}
