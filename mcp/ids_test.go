package mcp

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestTransportRefusesBadIDs: a request whose id is null, a fraction, or
// a number the SDK would answer with another id is answered -32600 with
// the id as given (null for null) and not handed on, so that no call goes
// unanswered or is answered under an id its client did not send; the
// ids MCP allows are handed on.
func TestTransportRefusesBadIDs(t *testing.T) {
	bad := []struct{ id, answered string }{
		{"null", "null"},
		{"1.5", "1.5"},
		{"-0.25", "-0.25"},
		{"99999999999999999999", "99999999999999999999"},
		{"9007199254740993", "9007199254740993"},
		{"1e300", "1e300"},
	}
	var in strings.Builder
	for _, b := range bad {
		in.WriteString(`{"jsonrpc":"2.0","id":` + b.id + `,"method":"ping"}` + "\n")
	}
	for _, id := range []string{`1`, `-7`, `0`, `"s"`, `""`, `1e3`, `9007199254740992`} {
		in.WriteString(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list"}` + "\n")
	}
	c, out := connect(t, strings.NewReader(in.String()))
	for range 7 {
		if req := mustRead(t, c, "tools/list"); !req.IsCall() {
			t.Errorf("a call with id %v was handed on as a notification", req.ID.Raw())
		}
	}
	rs := answers(t, out.Bytes())
	if len(rs) != len(bad) {
		t.Fatalf("%d answers, want %d: %s", len(rs), len(bad), out.Bytes())
	}
	for i, r := range rs {
		if string(r.ID) != bad[i].answered || r.Error.Code != codeInvalidRequest {
			t.Errorf("id %s was answered id %s, code %d, want id %s, code %d", bad[i].id, r.ID, r.Error.Code, bad[i].answered, codeInvalidRequest)
		}
	}
}

// TestTransportRefusesAnIDInUse: a call whose id is that of a call not
// yet answered is answered -32600 with that id and not handed on (the
// SDK would drop it unanswered); once the first is answered, its id may
// be used again.
func TestTransportRefusesAnIDInUse(t *testing.T) {
	pr, pw := io.Pipe()
	c, out := connect(t, pr)
	call := func(id string) { _, _ = io.WriteString(pw, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/list"}`+"\n") }
	go call("1")
	first := mustRead(t, c, "tools/list")
	go func() { call("1"); call("2") }()
	if req := mustRead(t, c, "tools/list"); req.ID.Raw() != int64(2) {
		t.Fatalf("read the call of id %v, want 2 (1 is in use)", req.ID.Raw())
	}
	rs := answers(t, out.Bytes())
	if len(rs) != 1 || string(rs[0].ID) != "1" || rs[0].Error.Code != codeInvalidRequest {
		t.Fatalf("the reused id was answered %s, want -32600 with id 1", out.Bytes())
	}
	if err := c.Write(context.Background(), &jsonrpc.Response{ID: first.ID, Result: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	go call("1")
	if req := mustRead(t, c, "tools/list"); req.ID.Raw() != int64(1) {
		t.Fatalf("read the call of id %v, want 1 again once answered", req.ID.Raw())
	}
}

// TestTransportRefusesTrailingData: a line that holds more than one JSON
// value (a message and then anything, or two messages) is no message:
// answered -32700 and not handed on, rather than read as its first
// message and the rest dropped unanswered.
func TestTransportRefusesTrailingData(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":1,"method":"ping"} trailing` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"ping"}{"jsonrpc":"2.0","id":3,"method":"ping"}` + "\n" +
		`{"jsonrpc":"2.0","id":4,"method":"tools/list"}` + "\n"
	c, out := connect(t, strings.NewReader(in))
	if req := mustRead(t, c, "tools/list"); req.ID.Raw() != int64(4) {
		t.Fatalf("read id %v, want 4", req.ID.Raw())
	}
	rs := answers(t, out.Bytes())
	if len(rs) != 2 || rs[0].Error.Code != codeParseError || rs[1].Error.Code != codeParseError {
		t.Fatalf("answered %s, want two -32700", out.Bytes())
	}
}
