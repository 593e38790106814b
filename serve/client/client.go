// Package client is a Go client of arca serve for embedders: it spawns
// serve with a pinned config and an explicit environment, waits for it to
// be ready, and sends requests over its stdin, pipelined, with typed
// results. Nothing but the wire is between the caller and serve: the
// client holds no secret beyond the call that returns it.
//
// Responses come in request order, so each call takes a slot in a queue
// when it writes its request; the reader hands each response to the slot
// at the head and checks the id it echoes. A call whose context ends
// returns at once but keeps its slot: its response, when it comes, is
// dropped, and later responses never shift. At most Options.MaxInFlight
// requests are on the wire; a call beyond that waits (backpressure).
package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"sync"
	"time"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/audit/trail"
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
	// StartTimeout bounds the wait for readiness (default 10 s).
	StartTimeout time.Duration
	// CloseTimeout is how long Close waits for serve to exit before it
	// kills it (default 5 s).
	CloseTimeout time.Duration
	// OnEvent, when set, is called with every audit event serve writes, in
	// order, from the goroutine that reads them: it must return fast. err
	// is set when the event breaks the stream: a seq gap, a broken chain.
	OnEvent func(e audit.Event, err error)
}

// ErrClosed is the error of a call made or in flight when serve is gone.
var ErrClosed = errors.New("arca serve is gone")

// Client is one serve process. It is safe for concurrent use.
type Client struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	o     Options

	wmu    sync.Mutex // the pending lines, and the queue's order with them
	nextID uint64
	wbuf   []byte        // request lines not yet written
	werr   error         // why writing stopped
	kick   chan struct{} // a line is pending
	stop   chan struct{} // Close: write what is pending, then close stdin
	wdone  chan struct{} // the writer is done
	window chan struct{}

	qmu     sync.Mutex
	queue   []*slot
	gone    error         // why the reader stopped; nil while it reads
	goneCh  chan struct{} // closed when the reader stopped
	exited  chan struct{} // closed when the process was waited for
	exitErr error
	stderr  stderrState
	closing sync.Once
}

// slot is one request's place in line.
type slot struct {
	id   string
	done chan response
}

type response struct {
	line []byte
	err  error
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
	c := &Client{cmd: cmd, o: o, window: make(chan struct{}, o.MaxInFlight), goneCh: make(chan struct{}), exited: make(chan struct{}),
		kick: make(chan struct{}, 1), stop: make(chan struct{}), wdone: make(chan struct{})}
	var err error
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("client: start %s: %w", o.Binary, err)
	}
	ready := make(chan error, 1)
	go c.readEvents(stderr, ready)
	go c.readResponses(stdout)
	go c.writeRequests()
	go func() { c.exitErr = cmd.Wait(); close(c.exited) }()
	select {
	case err := <-ready:
		if err != nil {
			c.kill()
			return nil, err
		}
	case <-time.After(o.StartTimeout):
		c.kill()
		return nil, fmt.Errorf("client: arca serve was not ready after %v", o.StartTimeout)
	case <-ctx.Done():
		c.kill()
		return nil, ctx.Err()
	}
	m, err := c.Manifest(ctx)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("client: the manifest: %w", err)
	}
	if m.Protocol != manifest.Protocol {
		c.Close()
		return nil, fmt.Errorf("client: arca serve speaks %q, this client %q", m.Protocol, manifest.Protocol)
	}
	return c, nil
}

// stderrState is what the event reader keeps: the stream's checks.
type stderrState struct {
	chain   *trail.Checker
	lastSeq uint64
}

// readEvents reads the audit wire: it reports readiness (the start event,
// or the stop event of a serve that could not start) and hands every
// event to OnEvent, checked.
func (c *Client) readEvents(r io.Reader, ready chan<- error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), audit.MaxLine+1)
	started := false
	c.stderr.chain = trail.NewChecker()
	for sc.Scan() {
		line := sc.Bytes()
		if started && c.o.OnEvent == nil {
			continue // nobody reads the stream: it is drained, not decoded
		}
		var e audit.Event
		err := json.Unmarshal(line, &e)
		if err == nil {
			err = c.stderr.chain.Step(line)
		}
		if err == nil && e.Seq != c.stderr.lastSeq+1 {
			err = fmt.Errorf("seq %d follows seq %d", e.Seq, c.stderr.lastSeq)
		}
		c.stderr.lastSeq = e.Seq
		if !started {
			switch {
			case e.Event == "start":
				started = true
				ready <- nil
			case e.Event == "stop":
				ready <- fmt.Errorf("client: arca serve did not start: %s", e.Message)
				started = true
			default:
				ready <- fmt.Errorf("client: arca serve wrote %q before its start event", line)
				started = true
			}
		}
		if c.o.OnEvent != nil {
			c.o.OnEvent(e, err)
		}
	}
	if !started {
		ready <- errors.New("client: arca serve ended before its start event (its stderr closed)")
	}
}

// readResponses hands each response line to the slot at the head of the
// queue; at the end of stdout every waiting slot gets ErrClosed.
func (c *Client) readResponses(r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	var err error
	for {
		var line []byte
		line, err = br.ReadBytes('\n')
		if err != nil {
			break
		}
		c.qmu.Lock()
		if len(c.queue) == 0 {
			c.qmu.Unlock()
			err = fmt.Errorf("client: a response with no request: %.200s", line)
			break
		}
		s := c.queue[0]
		c.queue = c.queue[1:]
		c.qmu.Unlock()
		<-c.window
		s.done <- response{line: line}
	}
	c.qmu.Lock()
	c.gone = ErrClosed
	if !errors.Is(err, io.EOF) {
		c.gone = fmt.Errorf("%w: %v", ErrClosed, err)
	}
	for _, s := range c.queue {
		s.done <- response{err: c.gone}
	}
	c.queue = nil
	c.qmu.Unlock()
	close(c.goneCh)
}

// Request is what a call sends beside its op: all optional.
type Request struct {
	Ref, Env, Actor, Attestation string
	Value                        []byte // put and rotate
}

// call sends one request and waits for its response, or for ctx.
func call[T any](ctx context.Context, c *Client, op string, r Request, result *T) error {
	select {
	case c.window <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.goneCh:
		return c.goneErr()
	}
	c.wmu.Lock()
	c.nextID++
	id := strconv.FormatUint(c.nextID, 10)
	line, err := encode(id, op, r)
	if err != nil {
		c.wmu.Unlock()
		<-c.window
		return err
	}
	s := &slot{id: id, done: make(chan response, 1)}
	c.qmu.Lock()
	if c.gone != nil || c.werr != nil {
		c.qmu.Unlock()
		c.wmu.Unlock()
		<-c.window
		return c.goneErr()
	}
	c.queue = append(c.queue, s)
	c.qmu.Unlock()
	c.wbuf = append(c.wbuf, line...)
	c.wmu.Unlock()
	select {
	case c.kick <- struct{}{}:
	default: // the writer is kicked already
	}
	select {
	case resp := <-s.done:
		if resp.err != nil {
			return resp.err
		}
		return decode(resp.line, id, result)
	case <-ctx.Done():
		return ctx.Err() // the slot stays: its response is dropped when it comes
	}
}

// writeRequests writes the pending request lines, as many as have
// gathered at once: concurrent callers share a write. At stop it writes
// what is left and closes serve's stdin.
func (c *Client) writeRequests() {
	defer close(c.wdone)
	var spare []byte
	for {
		var stopping bool
		select {
		case <-c.kick:
		case <-c.stop:
			stopping = true
		}
		c.wmu.Lock()
		buf := c.wbuf
		c.wbuf = spare[:0]
		c.wmu.Unlock()
		if len(buf) > 0 && c.werr == nil {
			if _, err := c.stdin.Write(buf); err != nil {
				c.wmu.Lock()
				c.werr = err
				c.wmu.Unlock()
			}
		}
		spare = buf
		if stopping {
			c.stdin.Close()
			return
		}
	}
}

func (c *Client) goneErr() error {
	c.qmu.Lock()
	defer c.qmu.Unlock()
	if c.gone != nil {
		return c.gone
	}
	return ErrClosed
}

// encode makes the request line, by hand: no reflection on the hot path.
func encode(id, op string, r Request) ([]byte, error) {
	b := make([]byte, 0, 64+len(r.Ref)+len(r.Env)+len(r.Value)+len(r.Actor)+len(r.Attestation))
	b = append(append(append(b, `{"id":`...), id...), `,"op":`...)
	b = audit.AppendString(b, op)
	field := func(name, v string) {
		if v != "" {
			b = append(append(append(b, ',', '"'), name...), '"', ':')
			b = audit.AppendString(b, v)
		}
	}
	field("ref", r.Ref)
	field("env", r.Env)
	if r.Value != nil {
		b = append(b, `,"value":`...)
		b = audit.AppendString(b, r.Value)
	}
	field("actor", r.Actor)
	field("attestation", r.Attestation)
	return append(b, '}', '\n'), nil
}

// Error is a request serve refused or failed: the wire's code and
// message, and the policy verdict when the PDP gave one.
type Error struct {
	Code    string  `json:"code"`
	Message string  `json:"message"`
	Policy  *Policy `json:"-"`
}

func (e *Error) Error() string { return "arca serve: " + e.Code + ": " + e.Message }

// Policy is a PDP verdict.
type Policy = audit.Policy

// decode reads a response for request id into result, in one pass.
func decode[T any](line []byte, id string, result *T) error {
	var resp struct {
		ID     json.RawMessage `json:"id"`
		OK     bool            `json:"ok"`
		Result *T              `json:"result"`
		Error  *Error          `json:"error"`
		Policy *Policy         `json:"policy"`
	}
	resp.Result = result
	if err := json.Unmarshal(line, &resp); err != nil {
		return fmt.Errorf("client: a response that is not JSON: %v", err)
	}
	if string(resp.ID) != id {
		return fmt.Errorf("client: the response to request %s carries id %s: the wire is out of step", id, resp.ID)
	}
	if !resp.OK {
		if resp.Error == nil {
			return errors.New("client: a failed response without an error")
		}
		resp.Error.Policy = resp.Policy
		return resp.Error
	}
	return nil
}

// Close ends the session: it closes serve's stdin (EOF), waits for serve
// to exit, and kills it when it has not after Options.CloseTimeout.
func (c *Client) Close() error {
	var err error
	c.closing.Do(func() {
		close(c.stop)
		<-c.wdone
		select {
		case <-c.exited:
			err = c.exitErr
		case <-time.After(c.o.CloseTimeout):
			c.kill()
			err = fmt.Errorf("client: arca serve did not exit within %v: killed", c.o.CloseTimeout)
		}
	})
	return err
}

// kill kills serve and waits for it.
func (c *Client) kill() {
	if c.cmd.Process != nil {
		c.cmd.Process.Kill()
	}
	<-c.exited
	c.closing.Do(func() { close(c.stop) })
}

// Pid is serve's process id.
func (c *Client) Pid() int { return c.cmd.Process.Pid }
