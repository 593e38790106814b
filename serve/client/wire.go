package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"

	"github.com/arca-secrets/arca/internal/jsonstr"
)

// readResponses hands each response line to the slot at the head of the
// queue, once it checked that the line answers that request; at the end of
// stdout every waiting slot gets ErrClosed. A line out of step ends the
// session: its slot and every waiting one fail with why, and serve is
// killed, as nothing it writes can be paired with a call any more.
func (c *Client) readResponses(r io.Reader) {
	lr := newLineReader(r, maxResponse)
	var err error
	var head *slot // the slot a line out of step came for
	for {
		line, rerr := lr.next()
		var long error
		switch {
		case errors.Is(rerr, errLong):
			// Its call fails; the lines after it still pair by position.
			long = fmt.Errorf("client: a response longer than %d bytes", maxResponse)
		case rerr != nil:
			err = rerr
		}
		if err != nil {
			break
		}
		c.qmu.Lock()
		if c.gone != nil { // a call found the wire out of step (breakWire)
			c.qmu.Unlock()
			break
		}
		if c.queue.n == 0 {
			c.qmu.Unlock()
			err = fmt.Errorf("client: a response (%d bytes) with no request waiting for it: %w", len(line)+1, errOutOfStep) // its newline counted
			break
		}
		s := c.queue.pop()
		c.qmu.Unlock()
		<-c.window
		c.answered.Add(1)
		if long == nil {
			if err = stepCheck(line, s.id); err != nil {
				head = s
				break
			}
		}
		s.deliver(line, long)
	}
	c.qmu.Lock()
	if c.gone == nil {
		c.gone = ErrClosed
		if !errors.Is(err, io.EOF) {
			c.gone = fmt.Errorf("%w: %v", ErrClosed, err)
		}
	}
	if head != nil {
		head.deliver(nil, c.gone)
	}
	for c.queue.n > 0 {
		c.queue.pop().deliver(nil, c.gone)
	}
	c.qmu.Unlock()
	close(c.goneCh)
	if errors.Is(err, errOutOfStep) {
		c.cmd.Process.Kill()
	}
	// serve's stdout is drained to its end: serve must not block on it
	// while Close waits for it to exit.
	_, _ = io.Copy(io.Discard, lr.rest())
}

// breakWire ends the session when a call found its response out of step,
// in a way the reader's check does not see (a second id further in the
// line): serve is killed, and the reader fails every waiting call with the
// error returned, which wraps ErrClosed.
func (c *Client) breakWire(why error) error {
	c.qmu.Lock()
	if c.gone == nil {
		c.gone = fmt.Errorf("%w: %v", ErrClosed, why)
	}
	gone := c.gone
	c.qmu.Unlock()
	c.cmd.Process.Kill()
	return gone
}

// ErrNotUTF8 is the error of a request with a string that is not valid
// UTF-8: the wire's strings are UTF-8, and encoding one would replace its
// bad bytes with U+FFFD, so that a put would store another value. Nothing
// of such a request is sent.
var ErrNotUTF8 = errors.New("not valid UTF-8")

// checkUTF8 refuses a request whose strings are not all valid UTF-8,
// naming the field, never quoting it.
func checkUTF8(r Request) error {
	if bad := badUTF8(r); bad != "" {
		return fmt.Errorf("client: the request's %s is %w: nothing was sent", bad, ErrNotUTF8)
	}
	return nil
}

// call sends one request and waits for its response, or for ctx.
func call[T any](ctx context.Context, c *Client, op string, r Request, result *T) error {
	if err := checkUTF8(r); err != nil {
		return err // before the call takes a place: it holds none
	}
	if ctx.Done() != nil && ctx.Err() != nil {
		return ctx.Err() // a call whose context has ended sends nothing
	}
	select {
	case c.window <- struct{}{}: // a place, at once: the common case
	default:
		select {
		case c.window <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		case <-c.goneCh:
			return c.goneErr()
		}
	}
	s := c.slots.get()
	c.wmu.Lock()
	c.qmu.Lock()
	if c.gone != nil || c.werr != nil {
		c.qmu.Unlock()
		c.wmu.Unlock()
		<-c.window
		s.release()
		return c.goneErr()
	}
	c.nextID++
	s.id = strconv.AppendUint(s.idBuf[:0], c.nextID, 10)
	c.queue.push(s)
	c.qmu.Unlock()
	// The line goes straight into the pending batch: in the queue's order,
	// and with no buffer of its own.
	c.wbuf = appendRequest(c.wbuf, s.id, op, r)
	c.wlines++
	c.wmu.Unlock()
	select {
	case c.kick <- struct{}{}:
	default: // the writer is kicked already
	}
	if done := ctx.Done(); done == nil {
		<-s.done // a context that never ends: no select
	} else {
		select {
		case <-s.done:
		case <-done:
			if s.state.CompareAndSwap(waiting, abandoned) {
				return ctx.Err() // the slot stays: the reader drops its response and frees it
			}
			<-s.done // the response came as ctx ended
			s.release()
			return ctx.Err()
		}
	}
	err := s.err
	if err == nil {
		env := r.Env
		if env == "" {
			env = c.defaultEnv
		}
		err = decode(s.line, sent{id: s.id, ref: r.Ref, env: env}, result)
	}
	s.release()
	if err != nil { // a call that fails returns no value, whatever the line held
		forget(result)
		*result = *new(T)
		if errors.Is(err, errOutOfStep) {
			err = c.breakWire(err)
		}
	}
	return err
}

// gatherYields bounds how many times the writer yields for more lines
// before it writes what it has.
const gatherYields = 16

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
		// When serve has work in hand, the callers that are ready go first
		// and their lines join this write: one write for many, and fewer,
		// fuller reads for serve. When it has none, the write goes at once.
		if c.sent.Load() > c.answered.Load() {
			c.gather()
		}
		c.wmu.Lock()
		buf := c.wbuf
		c.wbuf = spare[:0]
		lines := c.wlines
		c.wlines = 0
		c.wmu.Unlock()
		c.sent.Add(lines)
		if len(buf) > 0 && c.werr == nil {
			if _, err := c.stdin.Write(buf); err != nil {
				c.wmu.Lock()
				c.werr = err
				c.wmu.Unlock()
			}
		}
		clear(buf) // a put's line holds a value
		spare = buf
		if cap(spare) > 1<<20 {
			spare = nil // let a burst of large values go
		}
		if stopping {
			c.stdin.Close()
			return
		}
	}
}

// gather lets the callers that are ready add their lines before the
// writer takes them: it yields until a yield added none (or gatherYields
// ran out). A kick runs the writer as soon as the caller that sent it
// waits, ahead of the other callers the reader woke with it; without this
// each of those callers' lines would go in a write of its own. A yield
// lets any goroutine that is ready run first, the embedder's too: in a
// process whose cores are all busy, the write waits its turn among them
// (it goes at once, with no yield, while serve has nothing in hand).
func (c *Client) gather() {
	n := c.pendingLines()
	for range gatherYields {
		runtime.Gosched()
		m := c.pendingLines()
		if m == n {
			return
		}
		n = m
	}
}

// pendingLines is how many request lines wait for the writer.
func (c *Client) pendingLines() int64 {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.wlines
}

func (c *Client) goneErr() error {
	c.qmu.Lock()
	defer c.qmu.Unlock()
	if c.gone != nil {
		return c.gone
	}
	return ErrClosed
}

// appendString appends s as a JSON string: what the generated
// appendRequest (request_gen.go) writes each field of a request line with.
func appendString[S ~string | ~[]byte](b []byte, s S) []byte { return jsonstr.Append(b, s) }
