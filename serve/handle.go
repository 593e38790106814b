package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
)

// checked is a request line decoded and put through the checks of the
// protocol that come before ops, in its order: shape and fields, then the
// op. A line that fails one carries what refuse answers it with; one that
// passes carries its op's row, which goes with it from here on.
type checked struct {
	req     ops.Request
	spec    manifest.OpSpec
	refuse  string // the op to name in the refusal ("" before the op is known)
	code    manifest.Code
	problem string // "": it passed
}

// check decodes line once, its names through names (nil: none), and runs
// those checks.
func check(line []byte, names *interner) checked {
	req, problem := decodeRequest(line, names)
	if problem != "" {
		return checked{req: req, code: manifest.BadRequest, problem: problem}
	}
	spec, known := manifest.Op(req.Op)
	if !known {
		return checked{req: req, refuse: truncate(req.Op, 64), code: manifest.UnknownOp, problem: unknownOpMessage(req.Op)}
	}
	return checked{req: req, spec: spec}
}

// write reports whether c is an op that writes and passed the checks
// before ops: one a group of writes takes (see writes.go). Any other line
// is left to handle.
func (c *checked) write() bool { return c.problem == "" && c.spec.Writes }

// handle answers one checked request line with exactly one response and
// one event: its refusal, what serve makes of a meta-op, or what ops (the
// fields the op takes, ref and env, guardrails, the PDP, the vault) makes
// of it.
func (s *session) handle(ctx context.Context, c *checked) {
	req := &c.req
	defer s.recoverPanic(req.ID, req.Op, s.audit.Seq())
	if c.problem != "" {
		s.refuse(req, c.refuse, c.code, c.problem)
		return
	}
	id := req.ID
	req.ID = idOrNull(id)
	if c.spec.Meta {
		s.meta(ctx, c.spec, id, *req)
		return
	}
	if c.spec.Session {
		switch c.spec.Name {
		case "proxy":
			s.proxyOp(ctx, c.spec, id, *req)
		case "revoke", "approve", "approval":
			s.grantOp(ctx, c.spec, id, *req)
		default:
			s.scrub(ctx, c.spec, id, *req)
		}
		return
	}
	req.Scrub = s.scrubs.set // a use's outcome is scrubbed against the values released
	res, err := s.svc.Do(ctx, c.spec, *req)
	s.answer(id, res, err)
}

// answer queues the response of an op that ops ran: its result, or its
// error. ops wrote its events. A result that hands out a value registers
// it with the session's scrub here, as its answer is written, in request
// order.
func (s *session) answer(id []byte, res ops.Result, err error) {
	var b []byte
	if err == nil {
		if r, ok := res.(ops.Released); ok {
			s.scrubs.release(r.Released())
		}
		b, err = s.encode(res)
	}
	if err != nil {
		s.answerError(id, err)
		return
	}
	s.out = appendOK(s.out[:0], id, b, res.Verdict())
	s.w.respond(id, s.out)
}

// encode encodes a result into s.res: a result that holds a value encodes
// itself; encoding/json marshals the others, which hold none.
func (s *session) encode(res ops.Result) ([]byte, error) {
	if v, ok := res.(interface{ AppendJSON([]byte) []byte }); ok {
		s.res = v.AppendJSON(s.res[:0])
		return s.res, nil
	}
	return json.Marshal(res)
}

// meta answers a protocol meta-op, once ops has checked and audited it.
func (s *session) meta(ctx context.Context, spec manifest.OpSpec, id []byte, req ops.Request) {
	_, err := s.svc.Meta(ctx, spec, req)
	var result []byte
	if err == nil {
		switch spec.Name {
		case "manifest":
			result, err = s.manifest()
		case "shutdown":
			result, s.stop, s.stopReason = []byte(`{}`), true, "shutdown"
		}
	}
	if err != nil {
		s.answerError(id, err)
		return
	}
	s.out = appendOK(s.out[:0], id, result, nil)
	s.w.respond(id, s.out)
}

// scrub answers the scrub op from the session's scrubs, audited by ops
// with counts only.
func (s *session) scrub(ctx context.Context, spec manifest.OpSpec, id []byte, req ops.Request) {
	var res scrubResult
	err := s.svc.Session(ctx, spec, req, func() (string, error) {
		var err error
		res, err = s.scrubs.scrub(&req)
		return res.message(), err
	})
	s.answer(id, res, err)
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

// answerError queues the error response for a failed op; ops wrote its
// event. A failed audit write means the wire is broken: serve stops.
func (s *session) answerError(id []byte, err error) {
	if errors.Is(err, ops.ErrAudit) {
		s.w.setBroken()
	}
	d := details{cause: ops.CauseOf(err), approval: ops.ApprovalOf(err)}
	d.current, d.conflict = ops.ConflictOf(err)
	if d.approval != nil && s.page != nil {
		d.url = s.page.URL(d.approval.ID)
	}
	s.out = appendErrorDetails(s.out[:0], id, string(ops.CodeOf(err)), err.Error(), d, ops.PolicyOf(err))
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
	// The request's one event: written now, unless it already was (the
	// panic came after ops recorded the op).
	if s.audit.Seq() == seqBefore {
		if err := s.auditInternal(op, id); err != nil {
			return
		}
	}
	s.answerInternal(id)
}

// internalError is what a request a panic struck is told.
const internalError = "internal error while handling the request"

// auditInternal writes the one event of a request a panic struck.
func (s *session) auditInternal(op string, id []byte) error {
	ev := audit.Event{Event: "error", Op: op, Outcome: audit.Error, ID: idOrNull(id), Code: string(manifest.OpError), Message: internalError}
	return s.audit.Write(ev)
}

// answerInternal answers a request a panic struck op_error.
func (s *session) answerInternal(id []byte) {
	s.out = appendError(s.out[:0], id, string(manifest.OpError), internalError)
	s.w.respond(id, s.out)
}

// manifest answers the manifest op for this session's config.
func (s *session) manifest() ([]byte, error) {
	def, err := s.cfg.ResolveEnv("", "", s.ctxEnv)
	if err != nil {
		def = "" // no default env: every request must name one
	}
	return manifest.Document(manifest.Runtime{Envs: s.cfg.EnvNames(), DefaultEnv: def, PDPConfigured: s.cfg.Serve.PDP != nil,
		Services: s.cfg.ServiceDocs(), Actions: s.cfg.ActionDocs(), ApprovalPage: s.cfg.Serve.Approvals != nil, Renew: s.cfg.Serve.Grants.Rule(),
		History: s.cfg.HistoryDocs()})
}
