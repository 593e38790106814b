package mcp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

// A line that is not JSON-RPC is answered with a parse error whose id is
// null, as JSON-RPC 2.0 has it for a message whose id could not be read,
// and skipped: the message after it is read.
func TestParseErrorHasNullID(t *testing.T) {
	var out bytes.Buffer
	tr := &lineTransport{in: strings.NewReader("not json\n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"), out: &out}
	conn, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Read(context.Background()); err != nil {
		t.Fatalf("the message after the bad line: %v", err)
	}
	want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"message is not JSON-RPC 2.0"}}` + "\n"
	if out.String() != want {
		t.Errorf("answered %q, want %q", out.String(), want)
	}
	if _, err := conn.Read(context.Background()); !errors.Is(err, io.EOF) {
		t.Errorf("at the end of input: %v, want io.EOF", err)
	}
}
