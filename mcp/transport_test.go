package mcp

// The line transport alone: what it answers itself, what it skips, and
// how it ends.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// connect connects a line transport on in, its answers kept in out.
func connect(t *testing.T, in io.Reader) (sdk.Connection, *syncBuffer) {
	t.Helper()
	out := &syncBuffer{}
	c, err := (&lineTransport{in: in, out: out}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, out
}

// rpcError is an error answer the transport wrote itself.
type rpcError struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// answers decodes every line of out.
func answers(t *testing.T, out []byte) []rpcError {
	t.Helper()
	var rs []rpcError
	for line := range bytes.SplitSeq(bytes.TrimSpace(out), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var r rpcError
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("answer %q: %v", line, err)
		}
		rs = append(rs, r)
	}
	return rs
}

// mustRead reads the next message, which must be a request of method.
func mustRead(t *testing.T, c sdk.Connection, method string) *jsonrpc.Request {
	t.Helper()
	msg, err := c.Read(context.Background())
	if err != nil {
		t.Fatalf("read: %v, want %s", err, method)
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req.Method != method {
		t.Fatalf("read %#v, want a request %s", msg, method)
	}
	return req
}

func notification(method string) string {
	return `{"jsonrpc":"2.0","method":"` + method + `"}` + "\n"
}

// TestTransportSkipsWhatIsNoMessage: a line past MaxLine is answered
// -32700 with id null and the next line is read; so is a line that is
// not JSON-RPC; a batch is answered -32600; blank lines are skipped, and
// none of these is handed on.
func TestTransportSkipsWhatIsNoMessage(t *testing.T) {
	long := io.MultiReader(strings.NewReader(`{"jsonrpc":"2.0","method":"long","params":"`),
		io.LimitReader(repeatReader('x'), MaxLine), strings.NewReader("\"}\n"))
	in := io.MultiReader(long,
		strings.NewReader(notification("one")),
		strings.NewReader("this is no JSON\n"),
		strings.NewReader(`{"jsonrpc":"2.0"}`+"\n"),
		strings.NewReader(notification("two")),
		strings.NewReader(`[`+strings.TrimSpace(notification("batched"))+`]`+"\n"),
		strings.NewReader("\n   \n\r\n"),
		strings.NewReader(notification("three")),
	)
	c, out := connect(t, in)
	mustRead(t, c, "one")
	mustRead(t, c, "two")
	mustRead(t, c, "three")
	if _, err := c.Read(context.Background()); !errors.Is(err, io.EOF) {
		t.Fatalf("read at the end: %v, want EOF", err)
	}
	rs := answers(t, out.Bytes())
	want := []int{codeParseError, codeParseError, codeParseError, codeInvalidRequest}
	if len(rs) != len(want) {
		t.Fatalf("%d answers, want %d:\n%s", len(rs), len(want), out.Bytes())
	}
	for i, r := range rs {
		if r.Error.Code != want[i] || string(r.ID) != "null" || r.JSONRPC != "2.0" {
			t.Errorf("answer %d: %+v id %s, want %d with id null", i+1, r.Error, r.ID, want[i])
		}
	}
	if !strings.Contains(rs[0].Error.Message, "longer than") {
		t.Errorf("the long line's answer says %q", rs[0].Error.Message)
	}
}

// repeatReader reads b without end.
type repeatReader byte

func (r repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

// TestTransportAnswersBeforeEOF: input that ends with a call read and
// not answered ends the connection only once it is answered; a call of
// arca's own that the client can no longer answer is answered with an
// error first.
func TestTransportAnswersBeforeEOF(t *testing.T) {
	c, out := connect(t, strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call"}`))
	call := mustRead(t, c, "tools/call")
	ours, _ := jsonrpc.MakeID("arca-1")
	if err := c.Write(context.Background(), &jsonrpc.Request{ID: ours, Method: "elicitation/create"}); err != nil {
		t.Fatal(err)
	}
	msg, err := c.Read(context.Background())
	if err != nil {
		t.Fatalf("read after EOF with a call of arca's open: %v", err)
	}
	if resp, ok := msg.(*jsonrpc.Response); !ok || resp.ID != ours || resp.Error == nil {
		t.Fatalf("read %#v, want an error answer to arca's own call", msg)
	}
	var answered atomic.Bool
	ended := make(chan error, 1)
	go func() {
		_, err := c.Read(context.Background())
		if !answered.Load() {
			err = errors.New("the read ended before the call was answered")
		}
		ended <- err
	}()
	answered.Store(true)
	if err := c.Write(context.Background(), &jsonrpc.Response{ID: call.ID, Result: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if err := <-ended; !errors.Is(err, io.EOF) {
		t.Fatalf("read once the call was answered: %v, want EOF", err)
	}
	if !strings.Contains(string(out.Bytes()), `"id":7`) {
		t.Fatalf("the call's answer was not written: %s", out.Bytes())
	}
}

// TestTransportLineEdge: a line of MaxLine bytes, its newline aside, is
// read; one of MaxLine+1 is answered -32700.
func TestTransportLineEdge(t *testing.T) {
	line := func(method string, n int) string {
		head, tail := `{"jsonrpc":"2.0","method":"`+method+`","params":{"p":"`, `"}}`
		return head + strings.Repeat("x", n-len(head)-len(tail)) + tail + "\n"
	}
	c, out := connect(t, strings.NewReader(line("fits", MaxLine)+line("over", MaxLine+1)+notification("after")))
	if req := mustRead(t, c, "fits"); len(req.Params) != MaxLine-len(`{"jsonrpc":"2.0","method":"fits","params":}`) {
		t.Errorf("the line that fits was read with %d bytes of params", len(req.Params))
	}
	mustRead(t, c, "after")
	if rs := answers(t, out.Bytes()); len(rs) != 1 || rs[0].Error.Code != codeParseError {
		t.Fatalf("answers %+v, want one -32700 for the line over", rs)
	}
}
