package serve

import (
	"bytes"
	"context"
	"errors"
	"time"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
)

// Group commit. A write (put, rotate, rm) starts a group, and the writes
// right behind it that are already in the input join it: only lines
// buffered whole, never a read that could block, so a client that sends
// one write and waits is answered at once. The group ends at the first
// line that is not a write that passes its own checks (that line is then
// handled as ever, after the commit, so a read behind writes sees them
// committed), at the end of what is buffered, at maxGroupWrites writes or
// maxGroupBytes of their lines, once it has been open maxGroupTime (the
// file vault's writer lock is held while the group's writes are decided,
// a PDP call each; a decision under way when it passes runs to its end,
// so the lock is held at most maxGroupTime plus one decision), or when the
// audit wire fails or the session is being stopped.
//
// Every write of the group is run through ops on its own, in order, with
// its own PDP decision and its own events (ops.Writes); they are
// committed together, one rewrite and one fsync of the file vault, and
// every write is answered after the commit, in order. A write that fails
// fails alone; a commit that fails answers every write it held op_error,
// with its second event.
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

// handleLine answers one request line, and the writes behind it when it
// is a write, or the reads behind it when it is a read, more input is
// buffered and reads wait on something outside serve (see reads.go).
func (s *session) handleLine(ctx context.Context, line []byte) {
	c := check(line, &s.names)
	switch {
	case c.write():
		s.handleWrites(ctx, &c, len(line))
	case c.read() && s.maxReads > 1 && s.in.lineReady() && s.svc.ReadsWait():
		s.handleReads(ctx, &c)
	default:
		s.handle(ctx, &c)
	}
}

// groupRun is where a group is, for recoverGroup: its writes, whether its
// commit is running, and how many writes were answered after it.
type groupRun struct {
	items      []groupItem
	committing bool
	committed  bool
	answered   int
}

// handleWrites runs first and the writes behind it as one group.
func (s *session) handleWrites(ctx context.Context, first *checked, size int) {
	ws := s.svc.Writes()
	run := &groupRun{}
	defer s.recoverGroup(ws, run)
	start := time.Now()
	s.addWrite(ctx, ws, &run.items, first)
	for len(run.items) < s.maxGroup && size < maxGroupBytes && time.Since(start) < maxGroupTime &&
		!s.w.broken && ctx.Err() == nil && s.in.lineReady() {
		line, err := s.in.next()
		if err == nil && blank(line) {
			continue // a keep-alive: no reply, and no reason to end the group
		}
		var c checked
		if err == nil {
			c = check(line, &s.names)
		}
		if err != nil || !c.write() || size+len(line) > maxGroupBytes {
			// The loop takes it after the commit. The line stays valid:
			// nothing reads the input before then.
			s.held = &heldLine{line, err}
			break
		}
		size += len(line)
		s.addWrite(ctx, ws, &run.items, &c)
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
	id := bytes.Clone(req.ID)
	req.ID = idOrNull(id)
	*items = append(*items, groupItem{id: id, op: c.spec.Name, seq: s.audit.Seq()})
	it := &(*items)[len(*items)-1]
	it.w = ws.Add(ctx, c.spec, req)
	if it.w.Final() {
		if _, err := it.w.Result(); errors.Is(err, ops.ErrAudit) {
			s.w.broken = true // the group ends here; serve stops after it
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
//     was written), and every write is answered;
//   - in a commit (ops.Writes knows): whether it landed is unknown, and
//     every write's second event and answer say so;
//   - answering after the commit: the write whose answer panicked is
//     answered op_error (its events stand), the rest as they came out.
func (s *session) recoverGroup(ws *ops.Writes, run *groupRun) {
	r := recover()
	if r == nil {
		return
	}
	const msg = "internal error while handling the request"
	if run.committed {
		if run.answered > 0 {
			it := &run.items[run.answered-1]
			s.out = appendError(s.out[:0], it.id, string(manifest.OpError), msg)
			s.w.respond(it.id, s.out)
		}
		for i := run.answered; i < len(run.items); i++ {
			s.answerWrite(&run.items[i])
		}
		return
	}
	// The write in hand (the last, not final) gets its one event first if
	// it wrote none: first events come before the group's second events.
	var auditErr error
	if n := len(run.items); n > 0 && !run.committing {
		it := &run.items[n-1]
		if (it.w == nil || !it.w.Final()) && s.audit.Seq() == it.seq {
			ev := audit.Event{Event: "error", Op: it.op, Outcome: audit.Error, ID: idOrNull(it.id), Code: string(manifest.OpError), Message: msg}
			auditErr = s.audit.Write(ev)
		}
	}
	ws.Abort(msg) // whatever else fails: the group must let go of its vault
	if auditErr != nil {
		return
	}
	for i := range run.items {
		it := &run.items[i]
		if it.w != nil && it.w.Final() {
			s.answerWrite(it)
			continue
		}
		s.out = appendError(s.out[:0], it.id, string(manifest.OpError), msg)
		s.w.respond(it.id, s.out)
	}
}
