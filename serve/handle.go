package serve

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/vault"
)

// checked is a request line decoded and put through the checks of the
// protocol that come before ops, in its order: shape and fields, the op,
// the fields that op takes. A line that fails one carries what refuse
// answers it with.
type checked struct {
	req     request
	refuse  string // the op to name in the refusal ("" before the op is known)
	code    manifest.Code
	problem string // "": it passed
}

// check decodes line once and runs those checks.
func check(line []byte) checked {
	req, problem := decodeRequest(line)
	if problem != "" {
		return checked{req: req, code: manifest.BadRequest, problem: problem}
	}
	op, known := manifest.Op(req.op)
	if !known {
		return checked{req: req, refuse: truncate(req.op, 64), code: manifest.UnknownOp, problem: unknownOpMessage(req.op)}
	}
	if problem := fieldsProblem(op, &req); problem != "" {
		return checked{req: req, refuse: req.op, code: manifest.BadRequest, problem: problem}
	}
	return checked{req: req}
}

// write reports whether c is a write (put, rotate or rm) that passed every
// check of its own before ops: one a group of writes takes (see
// writes.go). Any other line is left to handle.
func (c *checked) write() bool {
	return c.problem == "" && (c.req.op == "put" || c.req.op == "rotate" || c.req.op == "rm")
}

// handle answers one checked request line with exactly one response and
// one event: its refusal, or what ops (ref and env, guardrails, the vault)
// makes of it.
func (s *session) handle(ctx context.Context, c *checked) {
	req := &c.req
	defer s.recoverPanic(req.id, req.op, s.audit.Seq())
	if c.problem != "" {
		s.refuse(req, c.refuse, c.code, c.problem)
		return
	}
	s.dispatch(ctx, req.op, req.id, opsRequest(req))
}

// opsRequest is req as ops takes it.
func opsRequest(req *request) ops.Request {
	return ops.Request{
		ID: idOrNull(req.id), Ref: req.ref, Env: req.env, Value: vault.NewSecret(req.value),
		Actor: req.actor, Attestation: req.attestation,
	}
}

func unknownOpMessage(op string) string {
	if cliOnly(op) {
		return fmt.Sprintf("%q is not served — use the single-shot CLI", op)
	}
	return fmt.Sprintf("unknown op %q", truncate(op, 64))
}

// truncate cuts s to at most n bytes, on a UTF-8 boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// fieldsProblem checks the fields op requires and refuses.
func fieldsProblem(spec manifest.OpSpec, req *request) string {
	has, op := req.has, spec.Name
	needRef, needValue := spec.TakesRef, spec.TakesValue
	switch {
	case needRef && has&fRef == 0:
		return fmt.Sprintf(`%s needs field "ref"`, op)
	case needValue && has&fValue == 0:
		return fmt.Sprintf(`%s needs field "value"`, op)
	case !needRef && has&fRef != 0:
		return fmt.Sprintf(`%s takes no field "ref"`, op)
	case !needValue && has&fValue != 0:
		return fmt.Sprintf(`%s takes no field "value"`, op)
	case needValue && len(req.value) == 0:
		return `field "value" is empty (a secret needs at least one byte)`
	}
	return ""
}

// dispatch runs op through ops and queues its response.
func (s *session) dispatch(ctx context.Context, op string, id []byte, r ops.Request) {
	var (
		result []byte
		policy *audit.Policy
		err    error
	)
	switch op {
	case "get":
		var res ops.GetResult
		if res, err = s.svc.Get(ctx, r); err == nil {
			s.res = AppendGet(s.res[:0], &res)
			result, policy = s.res, res.Policy
		}
	case "put":
		result, policy, err = encode(s.svc.Put(ctx, r))
	case "rotate":
		result, policy, err = encode(s.svc.Rotate(ctx, r))
	case "rm":
		result, policy, err = encode(s.svc.Rm(ctx, r))
	case "list":
		result, policy, err = encode(s.svc.List(ctx, r))
	case "check":
		result, policy, err = encode(s.svc.Check(ctx, r))
	case "manifest":
		if _, err = s.svc.Meta(ctx, op, r); err == nil {
			result, err = s.manifest()
		}
	case "shutdown":
		if _, err = s.svc.Meta(ctx, op, r); err == nil {
			result, s.stop, s.stopReason = []byte(`{}`), true, "shutdown"
		}
	}
	if err != nil {
		s.answerError(id, err)
		return
	}
	s.out = appendOK(s.out[:0], id, result, policy)
	s.w.respond(id, s.out)
}

// encode marshals a result and returns the verdict it carries.
func encode[T interface{ Verdict() *audit.Policy }](v T, err error) ([]byte, *audit.Policy, error) {
	if err != nil {
		return nil, nil, err
	}
	b, err := marshalResult(v)
	return b, v.Verdict(), err
}

// answerError queues the error response for a failed op; ops wrote its
// event. A failed audit write means the wire is broken: serve stops.
func (s *session) answerError(id []byte, err error) {
	if errors.Is(err, ops.ErrAudit) {
		s.w.broken = true
	}
	s.out = appendErrorPolicy(s.out[:0], id, string(ops.CodeOf(err)), err.Error(), ops.PolicyOf(err))
	s.w.respond(id, s.out)
}

// recoverPanic turns a panic in one request into op_error, audited once,
// and keeps the loop alive. The panic value is never printed: it might hold
// anything.
func (s *session) recoverPanic(id []byte, op string, seqBefore uint64) {
	r := recover()
	if r == nil {
		return
	}
	const msg = "internal error while handling the request"
	// The request's one event: written now, unless it already was (the
	// panic came after ops recorded the op).
	if s.audit.Seq() == seqBefore {
		ev := audit.Event{Event: "error", Op: op, Outcome: audit.Error, ID: idOrNull(id), Code: string(manifest.OpError), Message: msg}
		if err := s.audit.Write(ev); err != nil {
			return
		}
	}
	s.out = appendError(s.out[:0], id, string(manifest.OpError), msg)
	s.w.respond(id, s.out)
}

// manifest answers the manifest op for this session's config.
func (s *session) manifest() ([]byte, error) {
	def, err := s.cfg.ResolveEnv("", "", s.ctxEnv)
	if err != nil {
		def = "" // no default env: every request must name one
	}
	return manifest.Document(manifest.Runtime{Envs: s.cfg.EnvNames(), DefaultEnv: def, PDPConfigured: s.cfg.Serve.PDP != nil})
}
