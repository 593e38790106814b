package ops

import (
	"context"
	"errors"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/vault"
)

// Writes is a run of consecutive put, rotate and rm requests committed
// together: what serve makes of the writes already in its input. Each
// write is validated, resolved, checked by the guardrails and the PDP,
// prepared against what the writes before it left (vault.Group) and
// audited on its own, in the order added, with the events of a single
// write; a write that fails (a refusal, a rotate of a missing record, a
// vault it cannot open) fails alone. The writes that were audited are
// committed at once by Commit, one commit per vault: a run that moves to
// another vault, or that its vault says is full (vault.ErrCommitFirst),
// commits what it holds and goes on with a new group. A commit that fails
// fails every write it held with its second event (outcome error), in
// order, after the events of the writes added since.
//
// Nothing is committed before its event is written, and no write's result
// is final before Commit: a caller answers the writes after it. A Writes
// is used by one goroutine and ended with Commit (or Abort) promptly,
// since it may hold its vault's writer lock.
type Writes struct {
	s       *Service
	st      vault.Store // the vault of g
	g       vault.Group
	pending []*Written // audited, awaiting g's commit
	// committing is set while g commits: a panic that leaves it set
	// struck inside the commit (see Abort).
	committing bool
}

// Written is one write of a Writes. Its result is known once the Writes is
// committed.
type Written struct {
	c      call
	m      vault.Meta
	err    error
	done   bool
	result func(c *call, m vault.Meta) Result // its op's, from the handler table
}

// Writes starts a run of writes.
func (s *Service) Writes() *Writes { return &Writes{s: s} }

// Add runs op, the op table's row of an op that writes
// (manifest.OpSpec.Writes), up to its commit. Any other op is refused
// unknown_op, audited.
func (ws *Writes) Add(ctx context.Context, op manifest.OpSpec, req Request) *Written {
	w := &Written{}
	h, err := ws.s.handler(op, req, nil)
	if err == nil && !op.Writes {
		c := call{op: op.Name, ev: audit.Event{Op: op.Name, ID: req.ID}}
		err = ws.s.fail(&c, Errorf(manifest.UnknownOp, "%q is not a write", op.Name))
	}
	if err != nil {
		return w.finish(err)
	}
	w.result = h.result
	cv, err := ws.s.begin(ctx, op, req, nil)
	if err != nil {
		return w.finish(err)
	}
	w.c = cv
	c := &w.c
	st, err := ws.s.store(c.env)
	if err != nil {
		return w.finish(ws.s.fail(c, err))
	}
	write := h.change(c, &req)
	for again := true; ; again = false {
		if ws.g != nil && ws.st != st {
			ws.commit(ctx)
		}
		if ws.g == nil {
			g, err := st.Group(ctx)
			if err != nil {
				return w.finish(ws.s.fail(c, ws.s.vaultErr(c, err)))
			}
			ws.st, ws.g = st, g
		}
		var auditErr error
		m, err := ws.g.Add(ctx, write, func(m vault.Meta) error {
			auditErr = ws.s.recordCommit(c, m.Version)
			return auditErr
		})
		switch {
		case err == nil:
			w.m = m
			ws.pending = append(ws.pending, w)
			return w
		case errors.Is(err, vault.ErrCommitFirst) && again && len(ws.pending) > 0:
			ws.commit(ctx)
		case auditErr != nil:
			return w.finish(auditErr)
		default:
			return w.finish(ws.s.fail(c, ws.s.vaultErr(c, err)))
		}
	}
}

func (w *Written) finish(err error) *Written {
	w.err, w.done = err, true
	return w
}

// Commit commits the writes added since the last commit. Every Written is
// final after it.
func (ws *Writes) Commit(ctx context.Context) {
	if ws.g != nil {
		ws.commit(ctx)
	}
}

func (ws *Writes) commit(ctx context.Context) {
	ws.committing = true
	err := ws.g.Commit(ctx)
	ws.committing = false
	ws.end(err)
}

// Abort drops the writes added since the last commit: each fails with its
// second event, why saying why. What a panic leaves is ended so; a panic
// that struck inside a commit leaves its outcome unknown, and the second
// events say that instead.
func (ws *Writes) Abort(why string) {
	if ws.g != nil {
		ws.g.Abort()
	}
	if ws.committing {
		ws.end(unknownOutcome(why))
		return
	}
	ws.end(errors.New(why))
}

// unknownOutcome is a commit whose outcome nobody can tell.
type unknownOutcome string

func (u unknownOutcome) Error() string        { return string(u) }
func (u unknownOutcome) Is(target error) bool { return target == vault.ErrUnknownOutcome }

// end settles the pending writes with the outcome of their group's commit,
// each taken off the list as it is settled, so that none is settled twice.
func (ws *Writes) end(err error) {
	ws.st, ws.g, ws.committing = nil, nil, false
	for len(ws.pending) > 0 {
		w := ws.pending[0]
		ws.pending = ws.pending[1:]
		if err != nil {
			w.err = ws.s.failCommit(&w.c, err)
		}
		w.done = true
	}
	ws.pending = nil
}

// Result is what a write answers, as its op's handler makes it, or the
// error its events recorded. It must not be asked before the write is
// final (Writes.Commit).
func (w *Written) Result() (Result, error) {
	switch {
	case !w.done:
		return nil, Errorf(manifest.OpError, "%s was never committed", w.c.op)
	case w.err != nil:
		return nil, w.err
	}
	return w.result(&w.c, w.m), nil
}

// Final reports whether the write's result is known.
func (w *Written) Final() bool { return w.done }
