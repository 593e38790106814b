package serve

import (
	"bytes"
	"context"
	"errors"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
)

// Reads in flight together. A read (an op that neither writes nor is a
// meta-op: see checked.read) starts a run when a whole line is already
// buffered behind it and reads wait on something outside serve (a PDP, a
// shared vault: ops.Service.ReadsWait; reads of a file vault alone would
// gain nothing by running at once, and run in turn), and the reads behind it join the run as they are
// found in the input, buffered whole: never by waiting for input, so a
// client that sends one read and waits is answered at once. At most
// manifest.MaxReads reads of a run (fewer with Options.MaxReads) are in
// flight, begun and not yet answered; the next line buffered joins once
// the oldest is answered. The run ends at the first line that is not a
// read (a write, a meta-op; that line is then handled as ever, after every
// read of the run is answered, so a write is never overtaken by a read
// behind it and a read behind a write sees it committed), once what is
// buffered is all answered, or when the audit wire fails or the session is
// being stopped (the reads begun are answered, op_error once the audit wire
// failed). A line refused before ops (bad_request, unknown_op) joins
// the run too: it reads nothing and is refused in its turn.
//
// Each read of the run runs on a goroutine of its own (one of the
// session's readers, at most manifest.MaxReads, kept for the session),
// through ops up to its event (ops.Service.Read: its checks, its PDP
// decision, its vault read); the session's goroutine takes them in request
// order and, for each, writes its event (ops.Read.Finish) and queues its
// answer. So the audit chain and the answers come out exactly as if the
// reads ran one by one; only their PDP decisions and vault reads overlap.
// The answers queued are flushed (events first, as ever) whenever the
// session would wait for the next read to be done, so that a client
// keeping reads in flight gets its answers while the run goes on, and
// whenever flushAt of output is pending. A read
// that panics is answered op_error, audited in its turn, and the session
// goes on. Once the session is being stopped (a signal, ctx, a failed
// stdout), the read in hand is answered and the reads behind it in the
// run get no reply and no event, as the lines behind a request in hand
// always do; their values never leave. A use among them was made (a
// request sent, a child run), and so is audited all the same (auditMade);
// a use still waiting for room is never begun.

// read reports whether c is a line a run of reads takes: a read that
// passed the checks before ops (not a write, a meta-op, or a session op
// such as scrub, which works on what the session's answers released and
// so runs in its turn), or a line those checks refused.
func (c *checked) read() bool {
	return c.problem != "" || (!c.spec.Writes && !c.spec.Meta && !c.spec.Session)
}

// readItem is one line of a run of reads.
type readItem struct {
	c        checked
	ctx      context.Context
	id       []byte // the id, a copy: the line it came in is gone by its turn
	r        *ops.Read
	panicked bool
	done     chan struct{} // closed once r (or panicked) is set
	use      bool          // an http or exec: at most manifest.MaxUses in flight
	started  bool          // handed to a reader (a use may wait for room)
}

// handleReads runs first and the reads behind it as one run.
func (s *session) handleReads(ctx context.Context, first *checked) {
	items := make([]*readItem, 0, 8) // begun, not yet answered, in request order
	items = append(items, s.startRead(ctx, first))
	for answered := 0; len(items) > 0; answered++ {
		items = s.joinRun(ctx, items)
		it := items[0]
		select {
		case <-it.done:
		default:
			// Answers queued go out while the read in hand is under way.
			s.flushRun(s.w.ready())
			if !s.await(ctx, it, items) {
				answered-- // a line came first: the run takes it, then waits again
				continue
			}
		}
		items[0], items = nil, items[1:]
		s.startWaiting(ctx, items)
		if answered > 0 && s.stopping(ctx) {
			s.auditMade(it) // the session is stopping: no reply, and no event but a use's
			continue
		}
		// With the audit wire broken, a read begun is still answered: its
		// event cannot be written, and the wire answers it op_error.
		s.finishRead(it)
		s.flushRun(s.w.pending()) // a long run stays bounded in memory
	}
}

// flushRun writes what is pending, when now, inside a run; a failed
// stdout is kept for the loop to report, a failed stderr leaves the wire
// broken (see wire.flush).
func (s *session) flushRun(now bool) {
	if !now || s.w.isBroken() || s.outErr != nil {
		return
	}
	if err := s.w.flush(); !errors.Is(err, errBroken) {
		s.outErr = err
	}
}

// joinRun begins the reads already buffered whole behind the run, while
// fewer than s.maxReads are in flight; the first line that is not one is
// held for the loop, and ends the run.
func (s *session) joinRun(ctx context.Context, items []*readItem) []*readItem {
	for len(items) < s.maxReads && !waiting(items) && s.held == nil && !s.w.isBroken() && s.outErr == nil && ctx.Err() == nil && s.lineReady() {
		line, err := s.nextLine()
		if err == nil && blank(line) {
			continue // a keep-alive: no reply, and no reason to end the run
		}
		var c checked
		if err == nil {
			c = check(line, &s.names)
		}
		if err != nil || !c.read() {
			// The loop takes it once the run is answered. The line stays
			// valid: nothing reads the input before then.
			s.held = &heldLine{line, err}
			break
		}
		if c.problem == "" && c.spec.Use && usesInFlight(items) >= manifest.MaxUses {
			// It waits for a use ahead of it to be answered (startWaiting),
			// and the run takes no line behind it meanwhile.
			items = append(items, s.newItem(ctx, &c))
			break
		}
		items = append(items, s.startRead(ctx, &c))
	}
	return items
}

// usesInFlight counts the uses of a run begun and not yet answered.
func usesInFlight(items []*readItem) int {
	n := 0
	for _, it := range items {
		if it.use && it.started {
			n++
		}
	}
	return n
}

// waiting reports whether the last item of a run is a use not yet begun.
func waiting(items []*readItem) bool {
	return len(items) > 0 && !items[len(items)-1].started
}

// startWaiting begins the use waiting at the end of the run once fewer
// than manifest.MaxUses are in flight; once the session is stopping, it
// is never run (it gets no reply and no event).
func (s *session) startWaiting(ctx context.Context, items []*readItem) {
	if !waiting(items) || usesInFlight(items) >= manifest.MaxUses {
		return
	}
	it := items[len(items)-1]
	if s.stopping(ctx) {
		it.started = true
		close(it.done)
		return
	}
	s.begin(it)
}

// stopping reports whether the session is being stopped: the reads of a
// run behind the one in hand then get no reply.
func (s *session) stopping(ctx context.Context) bool {
	return ctx.Err() != nil || s.ended || s.outErr != nil
}

// auditMade writes the event of a use the session will not answer, as
// it stops, and flushes it to stderr at once (a failed stdout ends the
// session without another flush): the use was made (a request sent, a
// child run, or cut short as it was), and every use made is audited. A
// read that is not a use only read, and its value never leaves: it gets
// no event. After the stop event (s.ended) nothing is written.
func (s *session) auditMade(it *readItem) {
	if !it.use || it.r == nil || s.ended || s.w.isBroken() {
		return
	}
	_, _ = it.r.Finish() // its answer is dropped
	_ = s.w.Flush()      // a failed stderr leaves the wire broken
}

// await waits for it, the oldest read of the run. While a use is in
// flight and room is left in the run, the next line is read meanwhile
// (ahead.go), and the run takes it as soon as it comes. It reports whether it is done; false: a line came first.
func (s *session) await(ctx context.Context, it *readItem, items []*readItem) bool {
	if usesInFlight(items) == 0 || waiting(items) || len(items) >= s.maxReads || s.held != nil ||
		s.ahead != nil || s.w.isBroken() || s.outErr != nil || ctx.Err() != nil {
		<-it.done
		return true
	}
	s.readAhead()
	select {
	case <-it.done:
		return true
	case a := <-s.fetch:
		s.fetch, s.ahead = nil, &a
		return false // joinRun takes it, or holds it for the loop
	}
}

// startRead hands c's read to an idle reader, starting one when none is
// idle; a line refused before ops has nothing to run.
func (s *session) startRead(ctx context.Context, c *checked) *readItem {
	it := s.newItem(ctx, c)
	s.begin(it)
	return it
}

// newItem makes c's item of a run, not yet begun. A use's outcome is
// scrubbed against the values the session released.
func (s *session) newItem(ctx context.Context, c *checked) *readItem {
	it := &readItem{c: *c, ctx: ctx, id: bytes.Clone(c.req.ID), done: make(chan struct{}), use: c.problem == "" && c.spec.Use}
	it.c.req.ID = it.id
	it.c.req.Scrub = s.scrubs.set
	return it
}

// begin begins it: hands its read to an idle reader, starting one when
// none is idle; a line refused before ops has nothing to run.
func (s *session) begin(it *readItem) {
	it.started = true
	if it.c.problem != "" {
		close(it.done)
		return
	}
	it.c.req.Turn = s.svc.Turn() // its grant is settled in the order the reads were begun
	select {
	case s.reads <- it:
	default:
		if s.readers < s.maxReads {
			s.readers++
			go s.reader()
		}
		s.reads <- it
	}
}

// reader runs the reads it is handed until the session ends. Readers
// outlive the runs, so that a read does not pay for a goroutine of its
// own (whose stack grows again, deep in the vault's client, every time).
func (s *session) reader() {
	for {
		select {
		case it := <-s.reads:
			s.runRead(it)
		case <-s.quit:
			return
		}
	}
}

// runRead runs one read through ops up to its event.
func (s *session) runRead(it *readItem) {
	defer close(it.done)
	defer func() {
		if recover() != nil {
			it.panicked = true // the value is never printed: it might hold anything
		}
	}()
	req := it.c.req
	req.ID = idOrNull(it.id)
	it.r = s.svc.Read(it.ctx, it.c.spec, req)
}

// finishRead writes the event of one read of a run and queues its answer,
// as handle does for a line on its own.
func (s *session) finishRead(it *readItem) {
	req := &it.c.req
	defer s.recoverPanic(it.id, req.Op, s.audit.Seq())
	switch {
	case s.w.isBroken():
		// No event can be written: the read is answered as the wire
		// answers every request whose event it could not confirm.
		s.out = appendError(s.out[:0], it.id, string(manifest.OpError), wireFailed)
		s.w.respond(it.id, s.out)
	case it.c.problem != "":
		s.refuse(req, it.c.refuse, it.c.code, it.c.problem)
	case it.panicked:
		const msg = "internal error while handling the request"
		ev := audit.Event{Event: "error", Op: it.c.spec.Name, Outcome: audit.Error, ID: idOrNull(it.id), Code: string(manifest.OpError), Message: msg}
		if err := s.audit.Write(ev); err != nil {
			return // the wire is broken; flush answers op_error
		}
		s.out = appendError(s.out[:0], it.id, string(manifest.OpError), msg)
		s.w.respond(it.id, s.out)
	default:
		res, err := it.r.Finish()
		s.answer(it.id, res, err)
	}
}
