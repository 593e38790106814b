package mcp

import (
	"strings"
	"testing"
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
