package mcp

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestDrainAfterAnsweredCall: a call of arca's the client answered
// before its input ended is not answered again at the end, and the end
// of input still ends the session once the client's own call, read
// before it, is answered; ended is closed.
func TestDrainAfterAnsweredCall(t *testing.T) {
	in := strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{}}` + "\n" +
		`{"jsonrpc":"2.0","id":"e1","result":{"action":"accept"}}` + "\n")
	ended := make(chan struct{})
	conn, err := (&lineTransport{in: in, out: io.Discard, ended: ended}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ask, _ := jsonrpc.MakeID("e1")
	if err := conn.Write(ctx, &jsonrpc.Request{ID: ask, Method: "elicitation/create"}); err != nil {
		t.Fatal(err)
	}
	call, err := conn.Read(ctx)
	if r, ok := call.(*jsonrpc.Request); err != nil || !ok || r.Method != "tools/call" {
		t.Fatalf("first message %+v, %v", call, err)
	}
	if m, err := conn.Read(ctx); err != nil || m.(*jsonrpc.Response).ID != ask {
		t.Fatalf("second message %+v, %v", m, err)
	}
	answered := make(chan error, 1)
	go func() {
		<-ended // the input ended: the call is answered, and then the session may end
		answered <- conn.Write(ctx, &jsonrpc.Response{ID: call.(*jsonrpc.Request).ID, Result: []byte(`{}`)})
	}()
	if m, err := conn.Read(ctx); !errors.Is(err, io.EOF) {
		t.Fatalf("after the end of input: %+v, %v; want io.EOF", m, err)
	}
	if err := <-answered; err != nil {
		t.Fatal(err)
	}
}
