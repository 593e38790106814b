// Package client is a Go client of arca serve for embedders: it spawns
// serve with a pinned config and an explicit environment, waits for it to
// be ready, and sends requests over its stdin, pipelined, with typed
// results. Nothing but the wire is between the caller and serve: the
// client holds no secret beyond the call that returns it.
//
// Responses come in request order, so each call takes a slot in a queue
// when it writes its request; the reader hands each response to the slot
// at the head and checks the id it echoes. A response with another id
// means the streams are out of step: every pending call fails with
// ErrClosed and serve is killed. A call whose context ends
// returns at once but keeps its slot: its response, when it comes, is
// dropped, and later responses never shift. At most Options.MaxInFlight
// requests are on the wire; a call beyond that waits (backpressure).
//
// # Approvals and grants
//
// A request a human must approve first fails with *ApprovalRequired, at
// once: its Approval names the approval (ID, Summary, Fingerprint,
// ExpiresAt, and the approval page's URL when serve runs one). The host
// relays a decision with Approve, or the human decides on the page;
// Approval reports the state. WithApproval does the round trip: it runs
// the call, polls Approval (every ApprovalWait.Interval, 1 s by default)
// until the approval is decided, its ExpiresAt or the context's deadline,
// and retries the call with Request.Approval set; a denied or expired
// approval is *ApprovalDenied. Revoke closes grants.
//
// A value under a grant is dropped at expires_at: fetch it again. A get
// run under a grant that ends in time carries Got.ExpiresAt, and
// Got.Fresh, past it, wipes the value's bytes and returns ErrExpired.
//
// # Versions and compare-and-set
//
// A record keeps its earlier versions: Get with Request.Version reads one,
// History lists them (never a value), Rollback writes one again as a new
// version, Undelete brings back a name Rm soft-deleted, Destroy erases
// versions for good, List with Request.Deleted shows soft-deleted names,
// and Changes reports what changed since a cursor. A write with
// Request.IfVersion happens only while that is the current version (0:
// none); else it fails with *Conflict, whose CurrentVersion is the current
// one, and nothing is written: read again and retry (examples/cas).
package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/manifest"
)

// Options say how to spawn serve.
type Options struct {
	Binary string // the arca binary (required)
	Config string // --config: pin the config (else serve looks for one)
	Env    string // --env
	// Environ is serve's whole environment (NAME=value); nil gives it none
	// at all but what Binary needs to find files: set HOME, or pin Config.
	Environ []string
	Dir     string // the working directory ("" is the caller's)
	// MaxInFlight bounds the requests on the wire (default 256).
	MaxInFlight int
	// StartTimeout bounds Start as a whole: readiness and the manifest
	// (default 10 s).
	StartTimeout time.Duration
	// CloseTimeout is how long Close waits for serve to exit before it
	// kills it (default 5 s).
	CloseTimeout time.Duration
	// OnEvent, when set, is called with every audit event serve writes, in
	// order, from the goroutine that reads them: it must return fast. err
	// is set when the event breaks the stream: a seq gap, a prev that is
	// not the link of the line before, no prev once the stream or the
	// manifest (audit_chain) said the server chains. Each event is checked
	// against the line before it as it came: one bad line, one error.
	OnEvent func(e audit.Event, err error)
}

// ErrClosed is the error of a call made or in flight when serve is gone.
var ErrClosed = errors.New("arca serve is gone")

// errStartTimeout is the cause of Start's context when StartTimeout ran
// out, rather than the caller's context.
var errStartTimeout = errors.New("client: StartTimeout ran out")

// Client is one serve process. It is safe for concurrent use.
type Client struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	o     Options

	slots slotPool // spare slots for calls in flight

	wmu    sync.Mutex // the pending lines, and the queue's order with them
	nextID uint64
	wbuf   []byte // request lines not yet written
	wlines int64  // how many
	// Requests written and responses read: the difference is what serve
	// has in hand, which decides whether the writer waits a moment.
	sent, answered atomic.Int64
	werr           error         // why writing stopped
	kick           chan struct{} // a line is pending
	stop           chan struct{} // Close: write what is pending, then close stdin
	wdone          chan struct{} // the writer is done
	window         chan struct{}

	qmu    sync.Mutex
	queue  ring
	gone   error         // why the reader stopped; nil while it reads
	goneCh chan struct{} // closed when the reader stopped
	exited chan struct{} // closed when the process was waited for
	// readers are serve's stdout and stderr; the readers of each close
	// eventsDone and responsesDone when they reached the end.
	readers                   [2]*os.File
	eventsDone, responsesDone chan struct{}
	exitErr                   error
	stderr                    stderrState
	// chainPromised is set once the manifest listed audit_chain: every
	// event but the first must then carry prev.
	chainPromised atomic.Bool
	// defaultEnv is the manifest's, set before Start returns: the env most
	// results name, whose string the decoder reuses.
	defaultEnv string
	closing    sync.Once
}

// Start spawns serve and waits until it is ready: its start event. A serve
// that cannot start returns an error holding its stop message. It then
// checks, from the manifest, that serve speaks manifest.Protocol.
func Start(ctx context.Context, o Options) (*Client, error) {
	if o.Binary == "" {
		return nil, errors.New("client: Options.Binary is required")
	}
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = 256
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 10 * time.Second
	}
	if o.CloseTimeout <= 0 {
		o.CloseTimeout = 5 * time.Second
	}
	cmd := command(o)
	c := &Client{cmd: cmd, o: o, window: make(chan struct{}, o.MaxInFlight), goneCh: make(chan struct{}), exited: make(chan struct{}), eventsDone: make(chan struct{}), responsesDone: make(chan struct{}),
		kick: make(chan struct{}, 1), stop: make(chan struct{}), wdone: make(chan struct{}),
		queue: ring{s: make([]*slot, o.MaxInFlight)}}
	var err error
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	// stdout and stderr are pipes of the client's own, not cmd's: Wait
	// closes cmd's pipes once serve exits, which could drop the last lines
	// serve wrote (a final response, its stop event) before the readers
	// got them. These are read to their end, and closed by their readers.
	stdout, stdoutW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	stderr, stderrW, err := os.Pipe()
	if err != nil {
		stdout.Close()
		stdoutW.Close()
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = stdoutW, stderrW
	err = cmd.Start()
	stdoutW.Close() // serve holds the write ends now
	stderrW.Close()
	if err != nil {
		stdout.Close()
		stderr.Close()
		return nil, fmt.Errorf("client: start %s: %w", o.Binary, err)
	}
	ready := make(chan error, 1)
	c.readers = [2]*os.File{stdout, stderr}
	go func() { defer close(c.eventsDone); c.readEvents(stderr, ready) }()
	go func() { defer close(c.responsesDone); c.readResponses(stdout) }()
	go c.writeRequests()
	go func() { c.exitErr = cmd.Wait(); close(c.exited) }()
	// One deadline for readiness and the manifest both: a serve that
	// starts and then never answers must not hold Start past it.
	ctx, cancel := context.WithTimeoutCause(ctx, o.StartTimeout, errStartTimeout)
	defer cancel()
	select {
	case err := <-ready:
		if err == errNoStart {
			return nil, c.endedBeforeStart(ctx)
		}
		if err != nil {
			c.kill()
			return nil, err
		}
	case <-ctx.Done():
		c.kill()
		if context.Cause(ctx) == errStartTimeout {
			return nil, fmt.Errorf("client: arca serve was not ready after %v", o.StartTimeout)
		}
		return nil, ctx.Err()
	}
	m, err := c.Manifest(ctx)
	if err != nil {
		c.kill() // it may not be reading: a Close would wait CloseTimeout more
		if context.Cause(ctx) == errStartTimeout {
			return nil, fmt.Errorf("client: arca serve did not answer the manifest within StartTimeout (%v): %w", o.StartTimeout, err)
		}
		return nil, fmt.Errorf("client: the manifest: %w", err)
	}
	if m.Protocol != manifest.Protocol {
		c.Close()
		return nil, fmt.Errorf("client: arca serve speaks %q, this client %q", m.Protocol, manifest.Protocol)
	}
	c.chainPromised.Store(m.Has("audit_chain"))
	c.defaultEnv = m.DefaultEnv
	return c, nil
}

// endedBeforeStart is Start's error when serve's stderr closed before any
// line: serve was killed, or the binary is not arca. Its exit status says
// which, so Start waits a little for it, then kills what still runs.
func (c *Client) endedBeforeStart(ctx context.Context) error {
	status := "still running"
	wait := time.NewTimer(c.o.CloseTimeout)
	defer wait.Stop()
	select {
	case <-c.exited:
		status = c.cmd.ProcessState.String() // "exit status 3", "signal: killed"
	case <-ctx.Done():
	case <-wait.C:
	}
	c.kill()
	return fmt.Errorf("client: arca serve ended before its start event (its stderr closed; %s)", status)
}

// command is serve's command line for o, and its environment.
func command(o Options) *exec.Cmd {
	args := []string{"serve"}
	if o.Config != "" {
		args = append(args, "--config", o.Config)
	}
	if o.Env != "" {
		args = append(args, "--env", o.Env)
	}
	cmd := exec.Command(o.Binary, args...)
	cmd.Env = o.Environ
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	cmd.Dir = o.Dir
	return cmd
}

// Close ends the session: it closes serve's stdin (EOF) once the pending
// requests are written, waits for serve to exit, and kills it when it has
// not within Options.CloseTimeout. The deadline runs from the call, not
// from the last write: a serve that stalls (stopped, or stuck behind its
// PDP) never reads what is pending, and the writer stays blocked on the
// full pipe until the kill makes its write fail.
func (c *Client) Close() error {
	var err error
	c.closing.Do(func() {
		deadline := time.NewTimer(c.o.CloseTimeout)
		defer deadline.Stop()
		close(c.stop)
		select {
		case <-c.exited:
			err = c.exitErr
		case <-deadline.C:
			c.killWait()
			err = fmt.Errorf("client: arca serve did not exit within %v: killed", c.o.CloseTimeout)
		}
		// serve has exited and Wait closed its stdin: the writer's last
		// write has returned.
		<-c.wdone
		c.drained(time.Second)
	})
	return err
}

// drained waits until the readers have read serve's stdout and stderr to
// their ends, so every event and response serve wrote was handed on
// before Close returns. serve has exited by then; a process that kept its
// pipes open (none should), or a Close from within OnEvent, is cut off
// after limit: the pipes are closed and the readers end on their own.
func (c *Client) drained(limit time.Duration) {
	cut := time.NewTimer(limit)
	defer cut.Stop()
	defer c.readers[0].Close()
	defer c.readers[1].Close()
	for _, done := range []chan struct{}{c.eventsDone, c.responsesDone} {
		select {
		case <-done:
		case <-cut.C:
			return
		}
	}
}

// kill kills serve, waits for it and its pipes' readers, and stops the
// writer.
func (c *Client) kill() {
	c.killWait()
	c.closing.Do(func() {
		close(c.stop)
		c.drained(time.Second)
	})
}

// killWait kills serve and waits for it to exit.
func (c *Client) killWait() {
	if c.cmd.Process != nil {
		c.cmd.Process.Kill()
	}
	<-c.exited
}
