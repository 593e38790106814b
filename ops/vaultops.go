package ops

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/internal/glob"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/vault"
)

// The handlers of the served ops (see dispatch.go).

func (s *Service) get(ctx context.Context, cv call, req Request) (Result, error) {
	c := &cv
	c.ev.Message = req.Dest // a failure's message replaces it
	st, err := s.store(c.env)
	var rec vault.Record
	switch {
	case err != nil:
	case req.Version != 0:
		rec, err = versionOf(ctx, st, c.ref.Path(), req.Version)
	default:
		rec, err = st.Get(ctx, c.ref.Path())
	}
	if err != nil {
		return nil, s.fail(c, s.vaultErr(c, err))
	}
	if err := s.record(c, rec.Version); err != nil {
		return nil, err
	}
	return GetResult{Ref: c.ref.Canonical(), Env: c.env, Value: rec.Value, Version: rec.Version, Stamp: stampOf(rec.Meta), ExpiresAt: c.grantExpires, Decision: c.decision()}, nil
}

func putChange(c *call, req *Request) vault.Write {
	return vault.Write{Kind: vault.Put, Name: c.ref.Path(), Value: req.Value, IfVersion: req.IfVersion}
}

func putResult(c *call, m vault.Meta) Result {
	st := stampOf(m)
	return PutResult{Ref: c.ref.Canonical(), Env: c.env, Version: m.Version, Created: m.Created, CreatedAt: st.CreatedAt, UpdatedAt: st.UpdatedAt, Decision: c.decision()}
}

func rotateChange(c *call, req *Request) vault.Write {
	return vault.Write{Kind: vault.Rotate, Name: c.ref.Path(), Value: req.Value, IfVersion: req.IfVersion}
}

func rotateResult(c *call, m vault.Meta) Result {
	return RotateResult{Ref: c.ref.Canonical(), Env: c.env, Version: m.Version, Stamp: stampOf(m), Decision: c.decision()}
}

func rmChange(c *call, req *Request) vault.Write {
	return vault.Write{Kind: vault.Remove, Name: c.ref.Path(), IfVersion: req.IfVersion}
}

func rmResult(c *call, m vault.Meta) Result {
	return RmResult{Ref: c.ref.Canonical(), Env: c.env, Removed: true, Version: m.Version, Decision: c.decision()}
}

// failCommit audits the failed commit of c, whose change was audited: its
// second event.
func (s *Service) failCommit(c *call, err error) error {
	if errors.Is(err, vault.ErrUnknownOutcome) {
		return s.fail(c, Errorf(manifest.OpError, "%s of %s was audited, but whether it was committed is unknown: %v", c.op, c.ref.Canonical(), err))
	}
	return s.fail(c, Errorf(manifest.OpError, "%s of %s was audited but not committed: %v", c.op, c.ref.Canonical(), err))
}

func (s *Service) list(ctx context.Context, cv call, req Request) (Result, error) {
	c := &cv
	st, err := s.store(c.env)
	var metas []vault.Meta
	if err == nil {
		metas, err = st.List(ctx)
	}
	if err == nil && req.Deleted {
		metas, err = s.withDeleted(ctx, c.env, st, metas)
	}
	if err != nil {
		return nil, s.fail(c, s.vaultErr(c, err))
	}
	res := ListResult{Env: c.env, Decision: c.decision()}
	if req.Page != nil {
		if metas, err = pageOf(metas, req.Page, &res); err != nil {
			return nil, s.fail(c, err)
		}
	}
	res.Records = make([]ListRecord, 0, min(len(metas), manifest.MaxListRows))
	if len(metas) > manifest.MaxListRows {
		res.Truncated, res.Omitted = true, len(metas)-manifest.MaxListRows
		metas = metas[:manifest.MaxListRows]
	}
	for _, m := range metas {
		res.Records = append(res.Records, listRecord(m))
	}
	if err := s.record(c, 0); err != nil {
		return nil, err
	}
	return res, nil
}

func (s *Service) check(ctx context.Context, cv call, _ Request) (Result, error) {
	c := &cv
	name, vc, err := s.cfg.VaultFor(c.env)
	if err != nil {
		return nil, s.fail(c, err)
	}
	res := CheckResult{Env: c.env, Vault: name, Kind: vc.Kind, Problems: []string{}, Decision: c.decision()}
	st, err := s.store(c.env)
	var rep vault.Report
	if err == nil {
		rep, err = st.Check(ctx)
	}
	if err != nil {
		rep.Problems = append(rep.Problems, s.backends.Problems(vc)...)
		rep.Problems = append(rep.Problems, err.Error())
	}
	res.Records, res.Problems, res.Info = rep.Records, append(res.Problems, rep.Problems...), rep.Info
	res.Versions, res.Erased = rep.Versions, rep.Erased
	res.Healthy = len(res.Problems) == 0
	if rep.Erased > 0 {
		c.ev.Message = erasedMessage(rep.Erased)
	}
	if err := s.record(c, 0); err != nil {
		return nil, err
	}
	return res, nil
}

// erasedMessage is what the event of a check that erased n soft-deleted
// names past keep_deleted says of it: a loss, counted (the vault reports
// no names).
func erasedMessage(n int) string {
	if n == 1 {
		return "erased 1 soft-deleted name past keep_deleted"
	}
	return fmt.Sprintf("erased %d soft-deleted names past keep_deleted", n)
}

// vaultErr gives a vault failure its wire code.
func (s *Service) vaultErr(c *call, err error) error {
	var (
		e  *Error
		ce *vault.ConflictError
		vn *vault.VersionNotFoundError
	)
	switch {
	case errors.As(err, &e):
		return err
	case errors.As(err, &ce):
		return &Error{Code: manifest.Conflict, Msg: fmt.Sprintf("%s in env %q: %v; nothing was written", c.ref.Canonical(), c.env, ce), Err: err}
	case errors.As(err, &vn):
		return &Error{Code: manifest.NotFound, Msg: fmt.Sprintf("%s in env %q: %v", c.ref.Canonical(), c.env, vn), Err: err}
	case errors.Is(err, vault.ErrNotFound) && c.op == "undelete":
		return Errorf(manifest.NotFound, "%s in env %q is not a removed secret: nothing to undelete", c.ref.Canonical(), c.env)
	case errors.Is(err, vault.ErrNotFound):
		return Errorf(manifest.NotFound, "%s not found in env %q", c.ref.Canonical(), c.env)
	default:
		return &Error{Code: manifest.OpError, Msg: err.Error(), Err: err}
	}
}

// Session validates a session op (scrub), runs it with run, which serve
// gives it (the op works on what the session holds, not on a vault), and
// audits what run says: its event, with run's message (counts, never
// text), once run has returned; or run's error. It skips guardrails and
// the PDP as a meta-op does, and records the env the same way.
func (s *Service) Session(_ context.Context, op manifest.OpSpec, req Request, run func() (message string, err error)) error {
	if row, ok := manifest.Op(op.Name); !ok || row != op || !op.Session {
		c := call{op: op.Name, ev: audit.Event{Op: op.Name, ID: req.ID}}
		return s.fail(&c, Errorf(manifest.UnknownOp, "%q is not a session op", op.Name))
	}
	c, err := s.validated(op, req, nil)
	if err != nil {
		return err
	}
	if env, err := s.cfg.ResolveEnv(c.ref.Env, req.Env, s.ctxEnv); err == nil {
		c.env, c.ev.Env = env, env
	}
	msg, err := run()
	if err != nil {
		return s.fail(&c, err)
	}
	c.ev.Message = msg
	return s.record(&c, 0)
}

// Meta validates and audits a protocol meta-op (manifest, shutdown): its
// fields must be well-formed, its actor too. A meta-op reads no env and no
// vault and skips guardrails, so it needs no env: the env it would resolve
// to is recorded when it names a configured env, and an env that does not
// resolve (a config without the default env, a request naming one that is
// not configured) is left out of the event, never a reason to refuse. It
// returns the recorded env, "" when none.
func (s *Service) Meta(_ context.Context, op manifest.OpSpec, req Request) (string, error) {
	if row, ok := manifest.Op(op.Name); !ok || row != op || !op.Meta {
		c := call{op: op.Name, ev: audit.Event{Op: op.Name, ID: req.ID}}
		return "", s.fail(&c, Errorf(manifest.UnknownOp, "%q is not a meta-op", op.Name))
	}
	c, err := s.validated(op, req, nil)
	if err != nil {
		return "", err
	}
	if env, err := s.cfg.ResolveEnv(c.ref.Env, req.Env, s.ctxEnv); err == nil {
		c.env, c.ev.Env = env, env
	}
	return c.env, s.record(&c, 0)
}

// pageOf is the window p asks for of metas (sorted by name): the names
// its Match picks, from its Offset, its Limit at most. res.Matched is set
// to how many were picked, res.Omitted to how many of those the window
// leaves out.
func pageOf(metas []vault.Meta, p *ListPage, res *ListResult) ([]vault.Meta, error) {
	limit := p.Limit
	switch {
	case p.Offset < 0:
		return nil, Errorf(manifest.BadRequest, "a list's offset must be 0 or more")
	case limit < 0 || limit > manifest.MaxListRows:
		return nil, Errorf(manifest.BadRequest, "a list's limit must be 1 to %d", manifest.MaxListRows)
	case limit == 0:
		limit = manifest.MaxListRows
	}
	isGlob := strings.ContainsAny(p.Match, "*?[")
	if isGlob {
		if problem := glob.Problem(p.Match); problem != "" {
			return nil, Errorf(manifest.BadRequest, "the pattern %q: %s", p.Match, problem)
		}
	}
	picked := metas
	if p.Match != "" || p.DeletedOnly {
		picked = make([]vault.Meta, 0, len(metas))
		for _, m := range metas {
			switch {
			case p.DeletedOnly && (m.Touch == nil || m.Touch.DeletedAt.IsZero()):
			case p.Match == "" || isGlob && glob.Match(p.Match, m.Name) || !isGlob && strings.Contains(m.Name, p.Match):
				picked = append(picked, m)
			}
		}
	}
	res.Matched = len(picked)
	from := min(p.Offset, len(picked))
	window := picked[from : from+min(limit, len(picked)-from)]
	res.Omitted = len(picked) - len(window)
	res.Truncated = res.Omitted > 0
	return window, nil
}
