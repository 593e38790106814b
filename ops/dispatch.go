package ops

import (
	"context"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/internal/scrub"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/vault"
)

// Result is what a served op answers: its fields as the op's result schema
// names them (encoding/json marshals it, but for a result that holds a
// value, which encodes itself: see GetResult.AppendJSON), and the verdict
// of the PDP when one was consulted.
type Result interface {
	Verdict() *audit.Policy
}

// handler runs one served op once begin has let it through. An op that
// reads answers from the vault itself (read); an op that writes
// (manifest.OpSpec.Writes) names the one change it makes (change) and
// what it answers once that change is committed (result), and Writes
// prepares, audits and commits it.
type handler struct {
	// read takes its call and request by value: a pointer through this
	// function value would move both to the heap on every request.
	read   func(s *Service, ctx context.Context, c call, req Request) (Result, error)
	change func(c *call, req *Request) vault.Write
	result func(c *call, m vault.Meta) Result
}

// handlers is the table of the served ops that are not meta-ops, by name:
// the one place an op is tied to the code that runs it. A test holds it to
// manifest's op table, row for row.
func handlers() map[string]handler {
	return map[string]handler{
		"get":    {read: (*Service).get},
		"list":   {read: (*Service).list},
		"check":  {read: (*Service).check},
		"put":    {change: putChange, result: putResult},
		"rotate": {change: rotateChange, result: rotateResult},
		"rm":     {change: rmChange, result: rmResult},
		// Versions and history (history.go, historywrites.go).
		"history":  {read: (*Service).history},
		"changes":  {read: (*Service).changes},
		"rollback": {change: rollbackChange, result: rollbackResult},
		"undelete": {change: undeleteChange, result: undeleteResult},
		"destroy":  {change: destroyChange, result: destroyResult},
	}
}

// Do runs op on req: the one entry point of every served op that is not a
// meta-op, whichever door it came through. A read runs once begin has let
// it through (as a Read does, its event written as it comes); a write goes
// the way serve's groups of writes go (Writes), as a group of one. op must be the op
// table's own row (manifest.Op): a row that is not, or one with no
// handler, is refused unknown_op, audited, so that no caller can make an
// op skip the PDP or the checks of its fields by describing it otherwise.
func (s *Service) Do(ctx context.Context, op manifest.OpSpec, req Request) (Result, error) {
	if op.Use {
		return s.Read(ctx, op, req).Finish() // its outcome scrubbed, then its event written
	}
	if op.Writes {
		if _, err := s.handler(op, req, nil); err != nil {
			return nil, err
		}
		ws := s.Writes()
		w := ws.Add(ctx, op, req)
		ws.Commit(ctx)
		return w.Result()
	}
	return s.read(ctx, op, req, nil) // its event written as it comes
}

// Read is a read (a served op that neither writes nor is a meta-op) run in
// two steps, so that reads can run at once and still be audited in the
// order they were asked: Service.Read does everything but write its event
// (validation, resolution, guardrails, the PDP's decision, the vault's
// read) and keeps it; Finish writes it and only then returns the result.
// Reads may run concurrently with one another; their Finish calls are made
// by one goroutine, in the order the events must have.
type Read struct {
	s     *Service
	held  heldEvent
	res   Result
	err   error
	scrub *scrub.Set // a use's: the values its outcome is scrubbed against
}

// Read runs op on req up to its event, which it holds for Finish. An op
// that is not the op table's own read row is refused unknown_op (its event
// held as any other).
func (s *Service) Read(ctx context.Context, op manifest.OpSpec, req Request) *Read {
	defer s.turns.release(req.Turn) // also when it ends before its grant is settled
	r := &Read{s: s, scrub: req.Scrub}
	r.res, r.err = s.read(ctx, op, req, &r.held)
	return r
}

// read runs a read; its event is held in held, or written when held is nil.
func (s *Service) read(ctx context.Context, op manifest.OpSpec, req Request, held *heldEvent) (Result, error) {
	if op.Use {
		return s.use(ctx, op, req, held)
	}
	h, err := s.handler(op, req, held)
	if err != nil {
		return nil, err
	}
	if op.Writes {
		c := call{op: op.Name, ev: audit.Event{Op: op.Name, ID: req.ID}, held: held}
		return nil, s.fail(&c, Errorf(manifest.UnknownOp, "%q is not a read", op.Name))
	}
	c, err := s.begin(ctx, op, req, held)
	if err != nil {
		return nil, err
	}
	return h.read(s, ctx, c, req)
}

// ReadsWait reports whether this service's reads wait on something outside
// the process, so that running them beside one another pays: a PDP it
// consults, or a vault it has open whose reads make round trips (one that
// says so with a ReadsWait method: the shared vault). A file vault's read
// waits on nothing: reads of it alone gain nothing by running at once.
func (s *Service) ReadsWait() bool {
	if s.decider != nil {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.stores {
		if w, ok := st.(interface{ ReadsWait() bool }); ok && w.ReadsWait() {
			return true
		}
	}
	return false
}

// Finish writes the read's event and returns its result: a value only once
// its event is written. A read whose event cannot be written answers the
// audit's failure (ErrAudit), never its result.
func (r *Read) Finish() (Result, error) {
	if o, ok := r.res.(outcome); ok && r.err == nil {
		o.scrub(r.scrub) // its redactions go into the held event
	}
	for _, ev := range r.held.pre {
		if err := r.s.write(ev); err != nil {
			return nil, err
		}
	}
	if r.held.set {
		if err := r.s.write(r.held.ev); err != nil {
			return nil, err
		}
	}
	return r.res, r.err
}

// handler returns the handler of op, when op is the op table's row and ops
// runs it; else it audits the refusal (into held, when set) and returns it.
func (s *Service) handler(op manifest.OpSpec, req Request, held *heldEvent) (handler, error) {
	if h, ok := s.handlerOf(op); ok {
		return h, nil
	}
	c := call{op: op.Name, ev: audit.Event{Op: op.Name, ID: req.ID}, held: held}
	return handler{}, s.fail(&c, Errorf(manifest.UnknownOp, "%q is not an op ops runs", op.Name))
}

// handlerOf returns the handler of op, when op is the op table's row and
// ops runs it, auditing nothing.
func (s *Service) handlerOf(op manifest.OpSpec) (handler, bool) {
	h, ok := s.handlers[op.Name]
	row, known := manifest.Op(op.Name)
	return h, ok && known && row == op && (op.Writes == (h.change != nil))
}

// doAs runs the served op named name and returns its result as T: what the
// typed methods below share.
func doAs[T Result](ctx context.Context, s *Service, name string, req Request) (T, error) {
	var zero T
	op, ok := manifest.Op(name)
	if !ok {
		return zero, Errorf(manifest.UnknownOp, "unknown op %q", name)
	}
	r, err := s.Do(ctx, op, req)
	if err != nil {
		return zero, err
	}
	t, ok := r.(T)
	if !ok {
		return zero, Errorf(manifest.OpError, "%s answered a result of another op", name)
	}
	return t, nil
}

// Get returns a secret. The value is returned only once its event is written.
func (s *Service) Get(ctx context.Context, req Request) (GetResult, error) {
	return doAs[GetResult](ctx, s, "get", req)
}

// Put creates or overwrites a secret.
func (s *Service) Put(ctx context.Context, req Request) (PutResult, error) {
	return doAs[PutResult](ctx, s, "put", req)
}

// Rotate replaces the value of an existing secret.
func (s *Service) Rotate(ctx context.Context, req Request) (RotateResult, error) {
	return doAs[RotateResult](ctx, s, "rotate", req)
}

// Rm deletes a secret.
func (s *Service) Rm(ctx context.Context, req Request) (RmResult, error) {
	return doAs[RmResult](ctx, s, "rm", req)
}

// List returns every record's ref and metadata, never a value.
func (s *Service) List(ctx context.Context, req Request) (ListResult, error) {
	return doAs[ListResult](ctx, s, "list", req)
}

// Check probes the env's vault. A problem found is reported, not an error.
func (s *Service) Check(ctx context.Context, req Request) (CheckResult, error) {
	return doAs[CheckResult](ctx, s, "check", req)
}

// History returns a name's kept versions, never a value.
func (s *Service) History(ctx context.Context, req Request) (HistoryResult, error) {
	return doAs[HistoryResult](ctx, s, "history", req)
}

// Rollback writes a kept version's value again, as a new version.
func (s *Service) Rollback(ctx context.Context, req Request) (RollbackResult, error) {
	return doAs[RollbackResult](ctx, s, "rollback", req)
}

// Undelete makes a soft-deleted name's last version current again, as a
// new version.
func (s *Service) Undelete(ctx context.Context, req Request) (UndeleteResult, error) {
	return doAs[UndeleteResult](ctx, s, "undelete", req)
}

// Destroy erases versions of a name now, or the whole name: a deliberate
// loss.
func (s *Service) Destroy(ctx context.Context, req Request) (DestroyResult, error) {
	return doAs[DestroyResult](ctx, s, "destroy", req)
}

// Changes returns the names whose state changed since a cursor.
func (s *Service) Changes(ctx context.Context, req Request) (ChangesResult, error) {
	return doAs[ChangesResult](ctx, s, "changes", req)
}
