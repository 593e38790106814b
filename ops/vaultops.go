package ops

import (
	"context"
	"errors"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/vault"
)

// Get returns a secret. The value is returned only once its event is written.
func (s *Service) Get(ctx context.Context, req Request) (GetResult, error) {
	cv, err := s.begin(ctx, "get", req)
	if err != nil {
		return GetResult{}, err
	}
	c := &cv
	c.ev.Message = req.Dest // a failure's message replaces it
	st, err := s.store(c.env)
	var rec vault.Record
	if err == nil {
		rec, err = st.Get(ctx, c.ref.Path())
	}
	if err != nil {
		return GetResult{}, s.fail(c, s.vaultErr(c, err))
	}
	if err := s.record(c, rec.Version); err != nil {
		return GetResult{}, err
	}
	return GetResult{Ref: c.ref.Canonical(), Env: c.env, Value: rec.Value, Version: rec.Version, Stamp: stampOf(rec.Meta), Decision: c.decision()}, nil
}

// Put creates or overwrites a secret.
func (s *Service) Put(ctx context.Context, req Request) (PutResult, error) {
	cv, err := s.begin(ctx, "put", req)
	if err != nil {
		return PutResult{}, err
	}
	c := &cv
	m, err := s.apply(ctx, c, vault.Write{Kind: vault.Put, Name: c.ref.Path(), Value: req.Value})
	if err != nil {
		return PutResult{}, err
	}
	return putResult(c, m), nil
}

func putResult(c *call, m vault.Meta) PutResult {
	st := stampOf(m)
	return PutResult{Ref: c.ref.Canonical(), Env: c.env, Version: m.Version, Created: m.Created, CreatedAt: st.CreatedAt, UpdatedAt: st.UpdatedAt, Decision: c.decision()}
}

// Rotate replaces the value of an existing secret.
func (s *Service) Rotate(ctx context.Context, req Request) (RotateResult, error) {
	cv, err := s.begin(ctx, "rotate", req)
	if err != nil {
		return RotateResult{}, err
	}
	c := &cv
	m, err := s.apply(ctx, c, vault.Write{Kind: vault.Rotate, Name: c.ref.Path(), Value: req.Value})
	if err != nil {
		return RotateResult{}, err
	}
	return rotateResult(c, m), nil
}

func rotateResult(c *call, m vault.Meta) RotateResult {
	return RotateResult{Ref: c.ref.Canonical(), Env: c.env, Version: m.Version, Stamp: stampOf(m), Decision: c.decision()}
}

// Rm deletes a secret.
func (s *Service) Rm(ctx context.Context, req Request) (RmResult, error) {
	cv, err := s.begin(ctx, "rm", req)
	if err != nil {
		return RmResult{}, err
	}
	c := &cv
	m, err := s.apply(ctx, c, vault.Write{Kind: vault.Remove, Name: c.ref.Path()})
	if err != nil {
		return RmResult{}, err
	}
	return rmResult(c, m), nil
}

func rmResult(c *call, m vault.Meta) RmResult {
	return RmResult{Ref: c.ref.Canonical(), Env: c.env, Removed: true, Version: m.Version, Decision: c.decision()}
}

// apply prepares a change, audits it, then commits it. A commit that fails
// after its event was written is followed by a second event, outcome error.
func (s *Service) apply(ctx context.Context, c *call, w vault.Write) (vault.Meta, error) {
	st, err := s.store(c.env)
	if err != nil {
		return vault.Meta{}, s.fail(c, err)
	}
	var approved bool
	var auditErr error
	m, err := st.Apply(ctx, w, func(m vault.Meta) error {
		if auditErr = s.recordCommit(c, m.Version); auditErr != nil {
			return auditErr
		}
		approved = true
		return nil
	})
	switch {
	case err == nil:
		return m, nil
	case auditErr != nil:
		return vault.Meta{}, auditErr
	case approved:
		return vault.Meta{}, s.failCommit(c, err)
	default:
		return vault.Meta{}, s.fail(c, s.vaultErr(c, err))
	}
}

// failCommit audits the failed commit of c, whose change was audited: its
// second event.
func (s *Service) failCommit(c *call, err error) error {
	if errors.Is(err, vault.ErrUnknownOutcome) {
		return s.fail(c, Errorf(manifest.OpError, "%s of %s was audited, but whether it was committed is unknown: %v", c.op, c.ref.Canonical(), err))
	}
	return s.fail(c, Errorf(manifest.OpError, "%s of %s was audited but not committed: %v", c.op, c.ref.Canonical(), err))
}

// List returns every record's ref and metadata, never a value.
func (s *Service) List(ctx context.Context, req Request) (ListResult, error) {
	cv, err := s.begin(ctx, "list", req)
	if err != nil {
		return ListResult{}, err
	}
	c := &cv
	st, err := s.store(c.env)
	var metas []vault.Meta
	if err == nil {
		metas, err = st.List(ctx)
	}
	if err != nil {
		return ListResult{}, s.fail(c, s.vaultErr(c, err))
	}
	res := ListResult{Env: c.env, Records: make([]ListRecord, 0, min(len(metas), manifest.MaxListRows)), Decision: c.decision()}
	if len(metas) > manifest.MaxListRows {
		res.Truncated, res.Omitted = true, len(metas)-manifest.MaxListRows
		metas = metas[:manifest.MaxListRows]
	}
	for _, m := range metas {
		res.Records = append(res.Records, ListRecord{Ref: "arca://" + m.Name, Version: m.Version, Stamp: stampOf(m)})
	}
	if err := s.record(c, 0); err != nil {
		return ListResult{}, err
	}
	return res, nil
}

// Check probes the env's vault. A problem found is reported, not an error.
func (s *Service) Check(ctx context.Context, req Request) (CheckResult, error) {
	cv, err := s.begin(ctx, "check", req)
	if err != nil {
		return CheckResult{}, err
	}
	c := &cv
	name, vc, err := s.cfg.VaultFor(c.env)
	if err != nil {
		return CheckResult{}, s.fail(c, err)
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
	res.Healthy = len(res.Problems) == 0
	if err := s.record(c, 0); err != nil {
		return CheckResult{}, err
	}
	return res, nil
}

// vaultErr gives a vault failure its wire code.
func (s *Service) vaultErr(c *call, err error) error {
	var e *Error
	switch {
	case errors.As(err, &e):
		return err
	case errors.Is(err, vault.ErrNotFound):
		return Errorf(manifest.NotFound, "%s not found in env %q", c.ref.Canonical(), c.env)
	default:
		return &Error{Code: manifest.OpError, Msg: err.Error(), Err: err}
	}
}

// Meta validates and audits a protocol meta-op (manifest, shutdown): its
// fields must be well-formed, its actor too. A meta-op reads no env and no
// vault and skips guardrails, so it needs no env: the env it would resolve
// to is recorded when it names a configured env, and an env that does not
// resolve (a config without the default env, a request naming one that is
// not configured) is left out of the event, never a reason to refuse. It
// returns the recorded env, "" when none.
func (s *Service) Meta(_ context.Context, op string, req Request) (string, error) {
	if o, ok := manifest.Op(op); !ok || !o.Meta {
		return "", Errorf(manifest.UnknownOp, "%q is not a meta-op", op)
	}
	c, err := s.validated(op, req)
	if err != nil {
		return "", err
	}
	if env, err := s.cfg.ResolveEnv(c.ref.Env, req.Env, s.ctxEnv); err == nil {
		c.env, c.ev.Env = env, env
	}
	return c.env, s.record(&c, 0)
}
