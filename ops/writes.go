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
// Reserve tells it the writes to come, so that the vault can take ahead
// what they will need when their group opens.
//
// Nothing is committed before its event is written, and no write's result
// is final before Commit: a caller answers the writes after it. A Writes
// is used by one goroutine and ended with Commit (or Abort) promptly,
// since it may hold its vault's locks.
type Writes struct {
	s       *Service
	st      vault.Store // the vault of g
	g       vault.Group
	pending []*Written // audited, awaiting g's commit
	up      Upcoming   // the writes Reserve was told of
	added   int        // how many writes were added since
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
	ws.added++
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
			if err := ws.open(ctx, st, c.env); err != nil {
				return w.finish(ws.s.fail(c, ws.s.vaultErr(c, err)))
			}
		}
		var auditErr error
		m, err := ws.g.Add(ctx, write, func(m vault.Meta) error {
			c.ev.Message = touched(c.op, m) // what it did to the name's versions
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

// Upcoming is the write requests about to be added to a Writes, in
// order: Len of them, the i-th the op's row and request At(i) gives. A
// door hands the requests it holds through it rather than a copy of each,
// and keeps them as they are until the last of them is added.
type Upcoming interface {
	Len() int
	At(i int) (manifest.OpSpec, *Request)
}

// Reserve tells ws the writes about to be added, in the order they will
// be, so that the vault can take ahead, in one step, what they will need
// (vault.Reserver: the shared vault's record locks and the records read
// under them). Nothing is asked of the vault yet, nothing is audited and
// no PDP is asked. Each group ws opens from then on (only a write that
// passed its checks and the PDP opens one) is given, before its first
// Add, the names of the writes still to come to its vault, the one in
// hand first: a group that fills up or moves to another vault is
// followed by one given the rest. A write whose vault or name does not
// resolve (its ref, its env) is left out. The names may include writes
// that are refused when they are added; they are held no longer than the
// group. If the vault cannot reserve them, the group is let go and the
// writes go through Add as ever, which waits for the vault and audits
// what it meets. Reserve does nothing while a group is open (after an
// Add and before Commit).
func (ws *Writes) Reserve(up Upcoming) {
	if ws.g == nil {
		ws.up, ws.added = up, 0
	}
}

// target is the vault and the record name of the write req asks for as
// op, worked out as Add works them out (route, the handler's change),
// with nothing audited and no vault opened; false when they do not
// resolve.
func (s *Service) target(op manifest.OpSpec, req *Request) (vault, name string, ok bool) {
	h, ok := s.handlerOf(op)
	if !ok || !op.Writes {
		return "", "", false
	}
	r, err := ParseRef(req.Ref)
	if err != nil {
		return "", "", false
	}
	c := call{op: op.Name, spec: op, ref: r}
	if s.route(&c, req) != nil {
		return "", "", false
	}
	if vault, _, err = s.cfg.VaultFor(c.env); err != nil {
		return "", "", false
	}
	return vault, h.change(&c, req).Name, true
}

// open starts the group of ws on st, the vault of env, for the write in
// hand, and hands it the names of the writes still to come to that vault
// (Reserve). The group is ws's before it is asked to reserve, so that
// Abort lets go of it whatever happens.
func (ws *Writes) open(ctx context.Context, st vault.Store, env string) error {
	g, err := st.Group(ctx)
	if err != nil {
		return err
	}
	ws.st, ws.g = st, g
	r, ok := g.(vault.Reserver)
	if !ok {
		return nil
	}
	names := ws.toCome(env)
	if len(names) == 0 || r.Reserve(ctx, names) == nil {
		return nil
	}
	// The vault could not reserve them: a plain group meets what it meets.
	g.Abort()
	ws.st, ws.g = nil, nil
	if g, err = st.Group(ctx); err != nil {
		return err
	}
	ws.st, ws.g = st, g
	return nil
}

// toCome is the names of the writes Reserve was told of that are still
// to come to env's vault, the one in hand first: what a group opened for
// it is asked to reserve, worked out only for a vault that reserves.
func (ws *Writes) toCome(env string) []string {
	if ws.up == nil {
		return nil
	}
	v, _, err := ws.s.cfg.VaultFor(env)
	if err != nil {
		return nil
	}
	var names []string
	for i := ws.added - 1; i < ws.up.Len(); i++ {
		if vault, name, ok := ws.s.target(ws.up.At(i)); ok && vault == v {
			names = append(names, name)
		}
	}
	return names
}

// Holding reports whether a group is open: from then until Commit its
// vault may hold locks for it.
func (ws *Writes) Holding() bool { return ws.g != nil }

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
