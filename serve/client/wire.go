package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/arca-secrets/arca/audit"
)

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
			err = fmt.Errorf("client: a response (%d bytes) with no request waiting for it: the wire is out of step", len(line))
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
