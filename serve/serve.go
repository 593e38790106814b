// Package serve runs arca serve: newline-delimited JSON requests on stdin,
// one response line per request on stdout, in request order, and the audit
// wire on stderr. Every vault op goes through package ops, exactly as the
// CLI's do. The scrub op is the session's own: it redacts the values the
// session released (see scrub.go).
//
// Limits (see package manifest): a request line is at most 4 MiB; a longer
// one is answered bad_request (id null) and skipped without ever being held
// whole. A request nests at most 32 levels deep. Every field has its own
// cap, checked while decoding. The reads already in the input run at once
// when they wait on a PDP or a shared vault, at most manifest.MaxReads of
// them, audited and answered in request order (see reads.go).
//
// Signals: while it runs, Serve takes over the signals that would end the
// process at once or dump goroutines on stderr (see signal.go). Any of them
// ends the session as a cancelled ctx does: the request in hand is finished
// (its PDP's process group killed), a stop event names the signal, and
// Serve returns an error.
package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/serve/proxy"
	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/identity"
)

// Options configure a session.
type Options struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Config *ops.Config
	Env    string           // the process context: --env, else $ARCA_ENV
	Now    func() time.Time // time.Now when nil
	// Environ is the environment the PDP child's allowlist is taken from
	// (os.Environ()); nil gives the child an empty environment. The
	// approval page's token, $ARCA_APPROVER_TOKEN, is read from it; it
	// never reaches a child (the allowlist leaves it out).
	Environ []string
	// Backends opens and creates vaults by kind (see ops.Backends).
	Backends ops.Backends
	// Who is the process serving (audit.ProcessWho): its start event
	// carries it. The events of requests name their actor instead.
	Who audit.Who
	// Keys loads the identity files (see ops.Options.Keys): the caller
	// opens a protected one before Serve, which then holds it in memory.
	Keys *identity.Keys
	// Signals end the session early (see the package doc). Nil: Serve
	// subscribes to the process's stop signals itself for as long as it
	// runs.
	Signals <-chan os.Signal
	// MaxGroup bounds how many consecutive writes already in the input
	// are committed together (see writes.go): 0 is maxGroupWrites, 1
	// commits every write on its own.
	MaxGroup int
	// MaxReads bounds how many reads already in the input run at once
	// (see reads.go): 0 is manifest.MaxReads, 1 runs every read on its
	// own, in turn.
	MaxReads int

	// groupClock is the clock a group's maxGroupTime is measured on (a
	// test's own); time.Now when nil.
	groupClock func() time.Time
	// scrubClock is the clock scrub streams idle on (a test's own);
	// time.Now when nil.
	scrubClock func() time.Time
}

// session is one serve session. Its loop runs in a goroutine of its own and
// holds mu for everything but a read that may block, so that a signal can
// end the session while the loop waits for input: whoever sets ended under
// mu has written the last event, and the other writes nothing more.
type session struct {
	mu    sync.Mutex
	ended bool

	in         *lineReader
	w          *wire
	audit      *audit.Writer
	svc        *ops.Service
	cfg        *ops.Config
	ctxEnv     string
	stop       bool
	stopReason string
	out        []byte           // scratch for one response line
	res        []byte           // scratch for one encoded result
	maxGroup   int              // writes in a group at most
	clock      func() time.Time // a group's clock
	maxReads   int              // reads in a run at most
	reads      chan *readItem   // hands a read to an idle reader (reads.go)
	readers    int              // readers started
	quit       chan struct{}    // closed when the session has ended: the readers return
	outErr     error            // a flush in a run of reads failed (reads.go); the loop returns it
	names      interner
	fetch      chan aheadLine // the line being read ahead, when one is (ahead.go)
	ahead      *aheadLine     // a line read ahead, not yet taken
	held       *heldLine
	scrubs     *scrubs // the values the session released, and its scrub streams

	proxy   *proxy.Proxy // the session's proxy, nil until a proxy op opens it (proxyop.go)
	page    approvalPage // the approval page, nil unless [serve.approvals] listen is set
	environ []string     // Options.Environ: the approver's token may be in it
	who     audit.Who    // Options.Who, on the start event
}

// Serve serves until EOF or shutdown, and then returns nil. It returns an
// error when the session cannot start (a process env that does not
// resolve), one of its streams fails, a stop signal arrives or ctx is
// cancelled; it has then already said on the audit wire what it could. The
// error is for the caller's exit status, not for printing: stderr is the
// audit wire.
func Serve(ctx context.Context, o Options) error {
	w := &wire{stdout: o.Stdout, stderr: o.Stderr}
	aw := audit.NewWriter(w, audit.SourceServe, o.Now)
	svc := ops.New(ops.Options{Config: o.Config, Audit: aw, Now: o.Now, Env: o.Env, Backends: o.Backends, Keys: o.Keys,
		ConsultPDP: true, Environ: o.Environ})
	defer svc.Close()
	sigs := o.Signals
	if sigs == nil {
		var unsubscribe func()
		sigs, unsubscribe = subscribe()
		defer unsubscribe()
	}
	s := &session{in: newLineReader(o.Stdin, manifest.MaxLine), w: w, audit: aw, svc: svc, cfg: o.Config, ctxEnv: o.Env, maxGroup: o.MaxGroup, maxReads: o.MaxReads, environ: o.Environ,
		who: audit.CleanWho(o.Who)}
	if s.maxGroup <= 0 {
		s.maxGroup = maxGroupWrites
	}
	if s.clock = o.groupClock; s.clock == nil {
		s.clock = time.Now
	}
	if s.maxReads <= 0 || s.maxReads > manifest.MaxReads {
		s.maxReads = manifest.MaxReads
	}
	s.reads, s.quit = make(chan *readItem), make(chan struct{})
	defer close(s.quit)
	scrubClock := o.scrubClock
	if scrubClock == nil {
		scrubClock = time.Now
	}
	s.scrubs = newScrubs(scrubClock)
	return s.serve(ctx, sigs)
}

// run is the loop's goroutine: the whole session, unless a signal or ctx
// ends it first (errInterrupted).
func (s *session) run(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.closeProxy() // also when the loop ends with no stop event (a broken wire)
	defer s.closePage()
	err := s.loop(ctx)
	if !errors.Is(err, errInterrupted) {
		s.ended = true
	}
	return err
}

// loop reads and answers request lines until EOF, shutdown, a failed
// stream, or the session is interrupted.
func (s *session) loop(ctx context.Context) error {
	if err := s.start(); err != nil {
		return err
	}
	s.stopReason = "eof"
	rctx, epoch := ctx, uint64(0) // ctx with the current read epoch
	for !s.stop {
		ready := s.held != nil || s.lineReady()
		if !ready {
			if err := s.w.flush(); err != nil {
				return err
			}
			// The next lines come from a read not yet made: a new epoch,
			// so the vault checks again for other processes' writes.
			epoch++
			rctx = vault.WithEpoch(ctx, epoch)
		}
		if ctx.Err() != nil {
			return errInterrupted // the lines behind the request in hand get no reply
		}
		line, err := s.next(ready)
		switch {
		case s.ended, ctx.Err() != nil:
			// A line read while the session was being stopped is not run:
			// the stop came first.
			return errInterrupted
		case errors.Is(err, io.EOF):
			s.stop = true
			continue
		case errors.Is(err, errTooLong):
			s.refuse(&ops.Request{}, "", manifest.BadRequest, fmt.Sprintf("request line is longer than %d bytes", manifest.MaxLine))
		case err != nil:
			s.lifecycle("stop", "stdin failed: "+err.Error())
			s.w.flush()
			return fmt.Errorf("stdin: %w", err)
		case blank(line):
			continue
		default:
			if err := s.handleLine(rctx, line); err != nil {
				return err // a group's answers could not be flushed
			}
		}
		if s.outErr != nil {
			return s.outErr
		}
		if s.w.isBroken() {
			s.w.flush()
			return errBroken
		}
		if s.w.pending() {
			if err := s.w.flush(); err != nil {
				return err
			}
		}
	}
	s.lifecycle("stop", s.stopReason)
	return s.w.flush()
}

// cannotStart begins the message of the one stop event of a session
// that cannot start.
const cannotStart = "cannot start: "

// start writes the opening events, or the one stop event of a session that
// cannot start.
func (s *session) start() error {
	page, err := s.preflight()
	if err != nil {
		s.lifecycle("stop", cannotStart+err.Error())
		s.w.flush()
		return fmt.Errorf("cannot start: %w", err)
	}
	msg := fmt.Sprintf("arca %s serving %s", manifest.Version(), manifest.Protocol)
	if page != "" {
		msg += "; approvals at " + page
	}
	s.lifecycle("start", msg)
	if p := s.cfg.Serve.PDP; s.cfg.Origin == ops.OriginImplicit && p != nil {
		what := "exec: the working directory decides what code runs"
		if p.URL != "" {
			what = "url: the working directory decides which policy server's verdicts serve obeys"
		}
		s.lifecycle("warning", fmt.Sprintf("config %s comes from the working directory and sets [serve.pdp] %s", s.cfg.Path, what))
	}
	return s.w.flush()
}

// preflight refuses to start a session that could only fail: a process env
// that does not resolve, an approval page that cannot start. It starts
// the page, and returns its URL.
func (s *session) preflight() (string, error) {
	if _, err := s.cfg.ResolveEnv("", "", s.ctxEnv); err != nil && s.ctxEnv != "" {
		return "", err
	}
	page, err := s.startPage(s.environ)
	if err != nil {
		return "", fmt.Errorf("approval page: %w", err)
	}
	return page, nil
}

func (s *session) lifecycle(event, msg string) {
	if event == "stop" {
		s.closeProxy() // the events of the requests through it come before stop
		s.closePage()  // and those of the decisions made on it
		_ = s.svc.EndGrants()
	}
	ev := audit.Event{Event: event, Message: msg}
	if event == "start" || strings.HasPrefix(msg, cannotStart) {
		// The process's: on the start event, or on the stop of a session
		// that never started; a request names its actor.
		ev.User, ev.Host = s.who.User, s.who.Host
	}
	_ = s.audit.Write(ev)
}

// refuse answers a request that never reached ops, with its one event. The
// claims it carried are recorded as ops records them: the actor when well
// formed, the attestation by its hash.
func (s *session) refuse(req *ops.Request, op string, code manifest.Code, msg string) {
	ev := audit.Event{Event: "error", Op: op, Outcome: audit.BadRequest, ID: idOrNull(req.ID), Code: string(code), Message: msg}
	if ops.ValidActor(req.Actor) {
		ev.Actor = req.Actor
	}
	if req.Sent()&manifest.FieldAttestation != 0 {
		ev.AttestationSHA256 = audit.HashAttestation(req.Attestation)
	}
	if err := s.audit.Write(ev); err != nil {
		return // the wire is broken; flush answers op_error
	}
	s.out = appendError(s.out[:0], req.ID, string(code), msg)
	s.w.respond(req.ID, s.out)
}

func idOrNull(id []byte) []byte {
	if len(id) == 0 {
		return []byte("null")
	}
	return id
}

// cliOnly reports whether op is a verb served only by the CLI.
func cliOnly(op string) bool { return slices.Contains(manifest.CLIOnly(), op) }
