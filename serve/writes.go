package serve

import (
	"bytes"
	"context"
	"errors"
	"time"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
)

// Group commit. A write (put, rotate, rm) starts a group, and the writes
// right behind it that are already in the input join it: only lines
// buffered whole, never a read that could block, so a client that sends
// one write and waits is answered at once. serve first gathers them: up to
// the first line that is not a write that passes its own checks (that line
// is then handled as ever, after the commit, so a read behind writes sees
// them committed), the end of what is buffered, maxGroupWrites writes or
// maxGroupBytes of their lines. It tells ops what is coming
// (ops.Writes.Reserve), so that the group the first write let through
// opens can take ahead what the gathered writes need (the shared vault's
// record locks, waited for as a first write would), and starts the
// group's clock only once the group holds its vault: the group takes the
// gathered writes in order until it has been open maxGroupTime (the
// vault's locks are held while the group's writes are decided, a PDP call
// each; a decision under way when it passes runs to its end, so they are
// held at most maxGroupTime plus one decision), or the audit wire fails,
// or the session is being stopped. The writes gathered but not taken when
// the clock runs out are not dropped: they are the next group, after this
// one is committed and answered (told to ops again, with a clock of their
// own).
//
// Every write of the group is run through ops on its own, in order, with
// its own PDP decision and its own events (ops.Writes); they are
// committed together, one rewrite and one fsync of the file vault, and
// every write is answered after the commit, in order. A write that fails
// fails alone; a commit that fails answers every write it held op_error,
// with its second event. The answers of a committed group are flushed at
// once, with whatever else is pending, rather than when the input runs
// dry.
const (
	maxGroupWrites = 1024
	maxGroupBytes  = 4 << 20
	maxGroupTime   = 100 * time.Millisecond
)

// groupItem is one write of a group: its id (a copy: the line it came in
// is gone by the commit), the audit seq before it ran, and how ops has it.
type groupItem struct {
	id  []byte
	op  string
	seq uint64
	w   *ops.Written
}

// heldLine is a line the group read but did not take; the loop handles it
// next.
type heldLine struct {
	line []byte
	err  error
}

// gathered is the write lines a group read ahead, checked, each id a copy
// of its own: the ops.Upcoming that Reserve is given.
type gathered []checked

func (g gathered) Len() int                                 { return len(g) }
func (g gathered) At(i int) (manifest.OpSpec, *ops.Request) { return g[i].spec, &g[i].req }

// handleLine answers one request line, and the writes behind it when it
// is a write, or the reads behind it when it is a read, more input is
// buffered and reads wait on something outside serve (see reads.go). Its
// error is that of the flush after a group of writes.
func (s *session) handleLine(ctx context.Context, line []byte) error {
	c := check(line, &s.names)
	switch {
	case c.write():
		return s.handleWrites(ctx, &c, len(line))
	case c.read() && s.maxReads > 1 && (c.spec.Use || s.lineReady() && s.svc.ReadsWait()):
		s.handleReads(ctx, &c)
	default:
		s.handle(ctx, &c)
	}
	return nil
}

// groupRun is where the writes of handleWrites are, for recoverGroup: the
// lines gathered and not yet taken by a group, and the group under way:
// its writes, whether its commit is running, and how many writes were
// answered after it.
type groupRun struct {
	lines      gathered
	items      []groupItem
	committing bool
	committed  bool
	answered   int
}

// handleWrites gathers first and the writes buffered behind it and runs
// them as one group, or as groups in turn when one runs out of time or
// panics. The answers of each group are flushed once it is answered; a
// failed flush (stdout, or stderr: errBroken) ends it, and is its error.
func (s *session) handleWrites(ctx context.Context, first *checked, size int) error {
	ws := s.svc.Writes()
	run := &groupRun{lines: s.gather(ctx, first, size)}
	for {
		s.runGroup(ctx, ws, run)
		if err := s.w.flush(); err != nil {
			return err
		}
		if len(run.lines) == 0 || s.w.isBroken() || ctx.Err() != nil {
			return nil // lines left by a stopping session get no reply
		}
	}
}

// gather returns first and the write lines already buffered whole behind
// it (see Group commit); the line that ends them, if any, is held for the
// loop. Each id is copied: the next read reuses the line it points into.
func (s *session) gather(ctx context.Context, first *checked, size int) gathered {
	first.req.ID = bytes.Clone(first.req.ID)
	lines := gathered{*first}
	for len(lines) < s.maxGroup && size < maxGroupBytes && ctx.Err() == nil && s.lineReady() {
		line, err := s.nextLine()
		if err == nil && blank(line) {
			continue // a keep-alive: no reply, and no reason to end the group
		}
		var c checked
		if err == nil {
			c = check(line, &s.names)
		}
		if err != nil || !c.write() || size+len(line) > maxGroupBytes {
			// The loop takes it after the group. The line stays valid:
			// nothing reads the input before then.
			s.held = &heldLine{line, err}
			break
		}
		size += len(line)
		c.req.ID = bytes.Clone(c.req.ID)
		lines = append(lines, c)
	}
	return lines
}

// runGroup runs the first of run.lines as one group: ops is told the
// writes to come (Reserve), and they are taken in order until the group's
// clock runs out, the first always; the clock starts once the group holds
// its vault, so that a wait for the vault's locks is not counted. Then
// the group is committed and answered.
func (s *session) runGroup(ctx context.Context, ws *ops.Writes, run *groupRun) {
	run.items, run.committed, run.answered = run.items[:0], false, 0
	defer s.recoverGroup(ws, run)
	ws.Reserve(run.lines)
	var start time.Time
	started := false
	for len(run.lines) > 0 {
		over := started && s.clock().Sub(start) >= maxGroupTime
		if len(run.items) > 0 && (over || s.w.isBroken() || ctx.Err() != nil) {
			break
		}
		c := &run.lines[0]
		run.lines = run.lines[1:]
		s.addWrite(ctx, ws, &run.items, c)
		if !started && ws.Holding() {
			start, started = s.clock(), true
		}
	}
	run.committing = true
	ws.Commit(ctx)
	run.committing, run.committed = false, true
	for run.answered < len(run.items) {
		run.answered++ // before: a write whose answer panics is not answered twice
		s.answerWrite(&run.items[run.answered-1])
	}
}

// addWrite runs req through ops up to its commit.
func (s *session) addWrite(ctx context.Context, ws *ops.Writes, items *[]groupItem, c *checked) {
	req := c.req
	id := req.ID // a copy already (gather)
	req.ID = idOrNull(id)
	*items = append(*items, groupItem{id: id, op: c.spec.Name, seq: s.audit.Seq()})
	it := &(*items)[len(*items)-1]
	it.w = ws.Add(ctx, c.spec, req)
	if it.w.Final() {
		if _, err := it.w.Result(); errors.Is(err, ops.ErrAudit) {
			s.w.setBroken() // the group ends here; serve stops after it
		}
	}
}

// answerWrite queues the response of a write whose result is final.
func (s *session) answerWrite(it *groupItem) {
	res, err := it.w.Result()
	s.answer(it.id, res, err)
}

// recoverGroup is recoverPanic for a group, wherever it panicked:
//   - adding writes: the writes it holds uncommitted fail with their
//     second events, the write in hand is audited once (unless its event
//     was written), and every write is answered; a panic before the first
//     write was taken (telling ops what comes) makes the first the write
//     in hand;
//   - in a commit (ops.Writes knows): whether it landed is unknown, and
//     every write's second event and answer say so;
//   - answering after the commit: the write whose answer panicked is
//     answered op_error (its events stand), the rest as they came out.
//
// The lines gathered and not taken by the group are the next group, as
// when its clock runs out.
func (s *session) recoverGroup(ws *ops.Writes, run *groupRun) {
	r := recover()
	if r == nil {
		return
	}
	if run.committed {
		if run.answered > 0 {
			s.answerInternal(run.items[run.answered-1].id)
		}
		for i := run.answered; i < len(run.items); i++ {
			s.answerWrite(&run.items[i])
		}
		return
	}
	if len(run.items) == 0 && len(run.lines) > 0 {
		c := &run.lines[0]
		run.lines = run.lines[1:]
		run.items = append(run.items, groupItem{id: c.req.ID, op: c.spec.Name, seq: s.audit.Seq()})
	}
	// The write in hand (the last, not final) gets its one event first if
	// it wrote none: first events come before the group's second events.
	var auditErr error
	if n := len(run.items); n > 0 && !run.committing {
		it := &run.items[n-1]
		if (it.w == nil || !it.w.Final()) && s.audit.Seq() == it.seq {
			auditErr = s.auditInternal(it.op, it.id)
		}
	}
	ws.Abort(internalError) // whatever else fails: the group must let go of its vault
	if auditErr != nil {
		return
	}
	for i := range run.items {
		it := &run.items[i]
		if it.w != nil && it.w.Final() {
			s.answerWrite(it)
			continue
		}
		s.answerInternal(it.id)
	}
}
