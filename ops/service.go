// Package ops is the one path every vault operation takes, whichever door it
// came through (the CLI or arca serve): request validation, ref and env
// resolution, guardrails, the vault, and exactly one audit event per op.
//
// Ordering rule: nothing happens unaudited. A value is returned only after its
// event is written; a change is committed only after its event is written,
// and should the commit then fail a second event with outcome "error" follows.
package ops

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/internal/scrub"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops/ref"
	"github.com/arca-secrets/arca/ops/upstream"
	"github.com/arca-secrets/arca/pdp"
	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/identity"
)

// Options configure a Service.
type Options struct {
	Config *Config
	Audit  *audit.Writer
	Now    func() time.Time // stamps records; time.Now when nil
	Env    string           // the process context: --env, else $ARCA_ENV
	// ConsultPDP makes vault ops ask [serve.pdp] first (serve does; the CLI
	// does not). Environ is the environment the PDP's allowlist is taken from.
	ConsultPDP bool
	Environ    []string
	// Decider, when set, decides instead of the PDP [serve.pdp] names
	// (tests, benchmarks); ConsultPDP and [serve.pdp] are still needed.
	Decider pdp.Decider
	// Backends opens and creates vaults by kind (cmd/arca passes
	// ops/backend's Kinds); with none, every vault is unavailable.
	Backends Backends
	// Keys loads the identity files (once each: a protected one's
	// passphrase is asked once); nil loads plain files only. The Backends
	// cmd/arca passes share it.
	Keys *identity.Keys
}

// Service runs operations. It is safe for concurrent use and keeps the
// vaults it opened open until Close.
type Service struct {
	cfg      *Config
	audit    *audit.Writer
	now      func() time.Time
	ctxEnv   string
	backends Backends
	keys     *identity.Keys
	decider  pdp.Decider // [serve.pdp] when ConsultPDP; nil: no PDP is consulted
	handlers map[string]handler
	environ  []string // an action's child's environment starts from its allowlist

	mu     sync.Mutex
	stores map[string]vault.Store       // by vault name
	byEnv  map[string]vault.Store       // the same stores, by env
	hist   map[string]vault.History     // the history settings of each env in byEnv
	ups    map[string]*upstream.Service // the clients of the services used, by name

	grants    grants    // the session's grants (SPEC §14)
	turns     turns     // the order reads run at once settle their grants in
	approvals approvals // the session's approvals (SPEC §14)
}

// New returns a Service.
func New(o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Backends == nil {
		o.Backends = noBackends{}
	}
	s := &Service{cfg: o.Config, audit: o.Audit, now: o.Now, ctxEnv: o.Env, backends: o.Backends, keys: o.Keys, handlers: handlers(), environ: o.Environ, stores: map[string]vault.Store{}, byEnv: map[string]vault.Store{}, hist: map[string]vault.History{}}
	if o.ConsultPDP && o.Config != nil && o.Config.Serve.PDP != nil {
		p := o.Config.Serve.PDP
		s.decider = o.Decider
		if s.decider == nil {
			s.decider = pdp.New(pdp.Config{Exec: p.Exec, Mode: p.Mode, URL: p.URL, HTTPPath: p.HTTPPath, API: p.API,
				Timeout: time.Duration(p.TimeoutMS) * time.Millisecond, Environ: o.Environ})
		}
	}
	return s
}

// Keys is what loads the identity files (Options.Keys).
func (s *Service) Keys() *identity.Keys { return s.keys }

// Close closes every vault the service opened, and ends the PDP it kept
// running (a persistent child; an HTTP decider keeps no connection open).
func (s *Service) Close() error {
	var errs []error
	if s.decider != nil {
		errs = append(errs, s.decider.Close())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, st := range s.stores {
		errs = append(errs, st.Close())
		delete(s.stores, name)
	}
	clear(s.byEnv)
	clear(s.hist)
	for name, up := range s.ups {
		up.Close()
		delete(s.ups, name)
	}
	return errors.Join(errs...)
}

// call is a request that passed validation, resolution and guardrails.
// spec is the row of its served op; an audited change that is not a served
// op (a backup, a rekey) has none, only its op's name.
type call struct {
	op   string
	spec manifest.OpSpec
	env  string
	ref  ref.Ref // zero for list and check
	ev   audit.Event
	// held, when set, keeps c's one event instead of writing it: a read
	// run ahead of its turn (Read), whose event Finish writes.
	held *heldEvent
	// flush writes c's event through to the sink at once: a request
	// through the proxy, which no response line of serve's carries out.
	flush bool
	// scrub holds the values the session released (Request.Scrub): what
	// c's event records of the request (a use's path, a refusal's message
	// quoting what was sent) is scrubbed against them, since a caller may
	// put a value it was given there.
	scrub *scrub.Set
	// grantExpires is when the grant c runs under ends; zero when it
	// runs under none, or one unbounded by time.
	grantExpires time.Time
	// turn is the request's place in the order grants are settled in,
	// when it is a read run at once with others (Request.Turn); 0: none.
	turn uint64
}

// heldEvent is the one event of a read run ahead of its turn (see Read),
// and the grant events (grant.open, grant.close) its decision wrote,
// which go before it.
type heldEvent struct {
	pre []audit.Event
	ev  audit.Event
	set bool
}

// begin validates req as op, resolves its ref and env, applies the
// guardrails and consults the PDP. A request that fails here is audited and
// never reaches a vault.
// A held call keeps its event in held (see Read).
func (s *Service) begin(ctx context.Context, op manifest.OpSpec, req Request, held *heldEvent) (call, error) {
	c, err := s.validated(op, req, held)
	if err != nil {
		return call{}, err
	}
	if err := s.route(&c, &req); err != nil {
		return call{}, s.fail(&c, err)
	}
	if reason, denied := s.cfg.Guardrail(c.env, op.Name, c.ev.Ref, req.Actor); denied {
		return call{}, s.fail(&c, Errorf(manifest.Denied, "denied by guardrail: %s", reason))
	}
	if !op.Meta {
		if err := s.canOpen(c.env); err != nil {
			return call{}, s.fail(&c, err) // doomed: the PDP is not asked
		}
	}
	err = s.consult(ctx, &c, req)
	s.turns.release(c.turn)
	if err != nil {
		return call{}, s.fail(&c, err)
	}
	return c, nil
}

// route gives c the env its ref's pin, req and the process context pick
// (Config.ResolveEnv), auditing nothing.
func (s *Service) route(c *call, req *Request) error {
	env, err := s.cfg.ResolveEnv(c.ref.Env, req.Env, s.ctxEnv)
	if err != nil {
		return err
	}
	c.env, c.ev.Env = env, env
	return nil
}

// validated validates req as op and parses its ref, if it has one. A
// request that fails here is audited (into held, when set).
func (s *Service) validated(op manifest.OpSpec, req Request, held *heldEvent) (call, error) {
	req.Op = op.Name
	c := call{op: op.Name, spec: op, ev: audit.Event{Op: op.Name, ID: req.ID, Actor: req.Actor, Client: req.Client}, held: held, scrub: req.Scrub, turn: req.Turn}
	if req.Sent()&manifest.FieldAttestation != 0 {
		c.ev.AttestationSHA256 = audit.HashAttestation(req.Attestation)
	}
	if err := validate(op, &req); err != nil {
		if validateActor(req.Actor) != nil {
			c.ev.Actor = "" // an invalid actor is not recorded
		}
		if !ValidActor(req.Client) {
			c.ev.Client = "" // nor an invalid client name
		}
		return call{}, s.fail(&c, err)
	}
	if req.Ref != "" {
		r, err := ParseRef(req.Ref)
		if err != nil {
			return call{}, s.fail(&c, err)
		}
		c.ref, c.ev.Ref = r, r.Path()
	}
	return c, nil
}

// decision is the verdict to return with c's result.
func (c *call) decision() Decision { return Decision{Policy: c.ev.Policy} }

// record writes c's success event (or holds it: see call.held).
func (s *Service) record(c *call, version uint64) error {
	c.scrubUse()
	ev := c.ev
	ev.Event, ev.Outcome, ev.Version = c.op, audit.OK, version
	if c.held != nil {
		c.held.ev, c.held.set = ev, true
		return nil
	}
	return s.write(ev)
}

// recordCommit writes c's success event and flushes it out of any buffer:
// the change it describes is committed only after this returns nil.
func (s *Service) recordCommit(c *call, version uint64) error {
	ev := c.ev
	ev.Event, ev.Outcome, ev.Version = c.op, audit.OK, version
	if err := s.audit.WriteFlush(ev); err != nil {
		return auditError(err)
	}
	return nil
}

// fail audits err as c's outcome (or holds its event: see call.held) and
// returns it, carrying c's verdict.
func (s *Service) fail(c *call, err error) error {
	code := CodeOf(err)
	if msg := c.scrubbed(err.Error()); c.ev.Policy != nil || msg != err.Error() {
		err = &Error{Code: code, Msg: msg, Err: err, Policy: c.ev.Policy, Cause: CauseOf(err), Approval: ApprovalOf(err)}
	}
	c.scrubUse()
	ev := c.ev
	ev.Event, ev.Outcome, ev.Code, ev.Message = "error", outcomeOf(code), string(code), err.Error()
	if code == manifest.Denied || code == manifest.ApprovalRequired {
		ev.Event = "denied"
	}
	if c.held != nil {
		c.held.ev, c.held.set = ev, true
		return err
	}
	if werr := s.writeFor(c, ev); werr != nil {
		return werr
	}
	return err
}

// writeFor writes c's event, flushed when c says so.
func (s *Service) writeFor(c *call, ev audit.Event) error {
	if !c.flush {
		return s.write(ev)
	}
	if err := s.audit.WriteFlush(ev); err != nil {
		return auditError(err)
	}
	return nil
}

func (s *Service) write(ev audit.Event) error {
	if err := s.audit.Write(ev); err != nil {
		return auditError(err)
	}
	return nil
}

func outcomeOf(c manifest.Code) string {
	switch c {
	case manifest.BadRequest, manifest.UnknownOp:
		return audit.BadRequest
	case manifest.Denied, manifest.ApprovalRequired:
		return audit.Denied
	case manifest.NotFound:
		return audit.NotFound
	default:
		return audit.Error
	}
}

// scrubUse scrubs the path a use's event records (see call.scrub).
func (c *call) scrubUse() {
	if c.ev.Use != nil {
		c.ev.Use.Path = c.scrubbed(c.ev.Use.Path)
	}
}

// scrubbed is s with every value the session released redacted (see
// call.scrub); s itself when there are none.
func (c *call) scrubbed(s string) string {
	if c.scrub == nil || s == "" {
		return s
	}
	out, red := c.scrub.Scrub([]byte(s))
	if len(red) == 0 {
		return s
	}
	return string(out)
}
