package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/arca-secrets/arca/internal/ndjson"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxLine is the longest message line arca mcp reads: a longer one is
// answered with a JSON-RPC parse error (id null) and skipped to its
// newline without ever being held whole, and the session goes on.
const MaxLine = 4 << 20

// JSON-RPC error codes arca mcp answers a line with itself.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
)

// lineTransport is MCP's stdio transport over arca's own bounded line
// reader: the SDK's decodes an unbounded stream. One message a line,
// newline-delimited, no batches (the protocol versions arca speaks have
// none).
//
// The end of input ends the session once every call read before it is
// answered, as serve finishes the requests before its EOF: a client may
// write its calls and close. A request arca then makes of the client
// (an elicitation) can have no answer: it is answered at once with an
// error, as if the client had refused it.
type lineTransport struct {
	in  io.Reader
	out io.Writer
	// ended, when set, is closed when the input ends (or the connection
	// closes first).
	ended chan struct{}
	// spliced, when set, holds results' structured content to write in
	// place of their placeholders (splice.go).
	spliced *spliced
}

func (t *lineTransport) Connect(context.Context) (sdk.Connection, error) {
	c := &lineConn{out: t.out, spliced: t.spliced, incoming: make(chan lineOrErr), closed: make(chan struct{})}
	c.calls = calls{theirs: map[jsonrpc.ID]bool{}, inUse: map[jsonrpc.ID]bool{}, ours: map[jsonrpc.ID]bool{}, changed: make(chan struct{}, 1)}
	go c.readLoop(ndjson.NewReader(t.in, MaxLine, ndjson.Resync), t.ended)
	return c, nil
}

type lineOrErr struct {
	line []byte
	err  error
}

// lineConn is one session's connection. Reads come from one goroutine
// that owns the line reader; writes, the SDK's and the transport's own
// error answers, go out one whole line at a time under mu.
type lineConn struct {
	mu  sync.Mutex
	out io.Writer
	// spliced: results' structured content, written in place of the
	// placeholders the SDK encoded (splice.go); nil: none.
	spliced *spliced

	incoming  chan lineOrErr
	closed    chan struct{}
	closeOnce sync.Once

	calls calls // what is asked and not yet answered, both ways
	eof   bool  // the input ended: Read drains (Read's own)
}

// calls tracks the calls under way: the client's, which arca answers,
// and arca's own of the client. changed is signalled on every answer.
type calls struct {
	mu     sync.Mutex
	theirs map[jsonrpc.ID]bool
	// inUse is the ids of the client's calls not yet answered, each left
	// as its answer goes out (theirs, once it went): a call that reuses
	// one is refused, which the SDK would leave unanswered.
	inUse   map[jsonrpc.ID]bool
	ours    map[jsonrpc.ID]bool
	changed chan struct{} // buffered 1
}

func (c *lineConn) SessionID() string { return "" }

// readLoop hands each line on, a copy, until the input ends or fails;
// then it closes ended (when set).
func (c *lineConn) readLoop(r *ndjson.Reader, ended chan struct{}) {
	if ended != nil {
		defer close(ended)
	}
	for {
		line, err := r.Next()
		if errors.Is(err, ndjson.ErrCut) {
			err = nil // a last line without its newline is still a line
		}
		if err != nil && !errors.Is(err, ndjson.ErrTooLong) {
			c.hand(lineOrErr{err: err})
			return
		}
		if !c.hand(lineOrErr{line: bytes.Clone(line), err: err}) {
			return
		}
	}
}

// hand passes one line on, unless the connection closed first.
func (c *lineConn) hand(l lineOrErr) bool {
	select {
	case c.incoming <- l:
		return true
	case <-c.closed:
		return false
	}
}

// Read returns the next message. A line that is too long, not JSON-RPC,
// or a batch is answered here with a JSON-RPC error and skipped; blank
// lines are skipped.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		if c.eof {
			return c.drain(ctx)
		}
		var l lineOrErr
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
			return nil, io.EOF
		case l = <-c.incoming:
		}
		switch {
		case errors.Is(l.err, ndjson.ErrTooLong):
			c.answerError(codeParseError, fmt.Sprintf("message line is longer than %d bytes", MaxLine))
			continue
		case errors.Is(l.err, io.EOF):
			c.eof = true
			continue
		case l.err != nil:
			return nil, l.err
		}
		line := bytes.TrimSpace(l.line)
		if len(line) == 0 {
			continue
		}
		if line[0] == '[' {
			c.answerError(codeInvalidRequest, "batches are not accepted: one message a line")
			continue
		}
		msg, err := jsonrpc.DecodeMessage(line)
		if err != nil || !json.Valid(line) { // the SDK reads the first value and ignores what follows
			c.answerError(codeParseError, "message is not JSON-RPC 2.0")
			continue
		}
		switch m := msg.(type) {
		case *jsonrpc.Request:
			if raw, problem := idProblem(line); problem != "" {
				c.answerErrorID(codeInvalidRequest, problem, raw)
				continue
			}
			if m.IsCall() && !c.calls.use(m.ID) {
				id, _ := json.Marshal(m.ID.Raw())
				c.answerErrorID(codeInvalidRequest, "the request's id "+string(id)+" is that of a call not yet answered", id)
				continue
			}
			if m.IsCall() {
				c.calls.note(&c.calls.theirs, m.ID, true)
			}
		case *jsonrpc.Response:
			c.calls.note(&c.calls.ours, m.ID, false) // answered: nothing to answer for it at the end
		}
		return msg, nil
	}
}

// drain is Read once the input has ended: an error answer to each call
// of arca's that is still unanswered, then io.EOF once every call of the
// client's is answered.
func (c *lineConn) drain(ctx context.Context) (jsonrpc.Message, error) {
	for {
		c.calls.mu.Lock()
		for id := range c.calls.ours {
			delete(c.calls.ours, id)
			c.calls.mu.Unlock()
			return &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: codeInvalidRequest, Message: "the client closed its input"}}, nil
		}
		open := len(c.calls.theirs)
		c.calls.mu.Unlock()
		if open == 0 {
			return nil, io.EOF
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
			return nil, io.EOF
		case <-c.calls.changed:
		}
	}
}

// use marks id in use; false when it already is.
func (cs *calls) use(id jsonrpc.ID) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.inUse[id] {
		return false
	}
	cs.inUse[id] = true
	return true
}

// free marks id no longer in use.
func (cs *calls) free(id jsonrpc.ID) {
	cs.mu.Lock()
	delete(cs.inUse, id)
	cs.mu.Unlock()
}

// note adds id to set (add) or takes it out, and signals the change.
func (cs *calls) note(set *map[jsonrpc.ID]bool, id jsonrpc.ID, add bool) {
	cs.mu.Lock()
	if add {
		(*set)[id] = true
	} else {
		delete(*set, id)
	}
	cs.mu.Unlock()
	select {
	case cs.changed <- struct{}{}:
	default:
	}
}

// answerError writes an error response with id null: a line that could
// not be read as a message has no id to answer. (The SDK's encoder leaves
// out an id it does not have; JSON-RPC wants it null.)
func (c *lineConn) answerError(code int, msg string) { c.answerErrorID(code, msg, nil) }

// answerErrorID writes an error response with the id as given, raw
// (nil: null).
func (c *lineConn) answerErrorID(code int, msg string, id json.RawMessage) {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, err := json.Marshal(struct {
		Version string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"` // null when nil: the SDK's encoder leaves a null id out
		Error   *jsonrpc.Error  `json:"error"`
	}{Version: "2.0", ID: id, Error: &jsonrpc.Error{Code: int64(code), Message: msg}})
	if err != nil {
		return
	}
	_ = c.writeLine(b)
}

func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b, err := encodeMessage(msg, c.spliced)
	if err != nil {
		return fmt.Errorf("encode message: %v", err)
	}
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if m.IsCall() {
			c.calls.note(&c.calls.ours, m.ID, true)
		}
	case *jsonrpc.Response:
		c.calls.free(m.ID)                               // before it is written: the client may reuse it then
		defer c.calls.note(&c.calls.theirs, m.ID, false) // once written
	}
	return c.writeLine(b)
}

// encodeMessage encodes msg as one line. A result is written around the
// bytes the SDK already encoded it to, as they are: the SDK's own encoder
// would check and copy them once more (the most a tool call costs).
// Anything else is the SDK's to encode.
func encodeMessage(msg jsonrpc.Message, sp *spliced) ([]byte, error) {
	r, ok := msg.(*jsonrpc.Response)
	if !ok || r.Error != nil || len(r.Result) == 0 || !r.ID.IsValid() {
		return jsonrpc.EncodeMessage(msg)
	}
	id, err := json.Marshal(r.ID.Raw())
	if err != nil {
		return nil, err
	}
	result := r.Result
	if sp != nil {
		result = sp.splice(result)
	}
	b := make([]byte, 0, len(result)+len(id)+40)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, '}'), nil
}

func (c *lineConn) writeLine(b []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err := c.out.Write(append(b, '\n'))
	return err
}

func (c *lineConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}
