package mcp

import (
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkEncoded is a tool result as the SDK encodes it, with sc as its
// structured content.
func sdkEncoded(t *testing.T, text string, sc any) []byte {
	t.Helper()
	b, err := json.Marshal(&sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}, StructuredContent: sc})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSplicedWritesTheHeldBytes(t *testing.T) {
	p := newSpliced()
	want := json.RawMessage(`{"env":"default","records":[{"ref":"arca://app/db","version":1}]}`)
	placeholder := p.hold(want)
	if _, raw := placeholder.(json.RawMessage); !raw || strings.Contains(string(placeholder.(json.RawMessage)), "arca://") {
		t.Fatalf("placeholder %s: want a string that is not the result", placeholder)
	}
	got := p.splice(sdkEncoded(t, "1 record", placeholder))
	var res struct {
		StructuredContent json.RawMessage `json:"structuredContent"`
		Content           []struct{ Text string }
	}
	if err := json.Unmarshal(got, &res); err != nil {
		t.Fatalf("spliced result is not JSON: %v\n%s", err, got)
	}
	if string(res.StructuredContent) != string(want) || res.Content[0].Text != "1 record" {
		t.Fatalf("spliced result %s: want structured content %s", got, want)
	}
	if len(p.held) != 0 {
		t.Fatalf("%d results still held after the splice", len(p.held))
	}
	// Written once: a second splice of the same bytes finds nothing held.
	again := sdkEncoded(t, "1 record", placeholder)
	if string(p.splice(again)) != string(again) {
		t.Fatal("a placeholder was spliced twice")
	}
}

// A result's text is a JSON string: however a client words a ref or a
// message, its quotes are escaped, and no key but the session's own is
// taken for a placeholder.
func TestSplicedLeavesLookalikesAlone(t *testing.T) {
	p, other := newSpliced(), newSpliced()
	p.hold(json.RawMessage(`{"a":1}`))
	forged := other.hold(json.RawMessage(`{"b":2}`))
	for name, b := range map[string][]byte{
		"another session's placeholder": sdkEncoded(t, "x", forged),
		"the prefix inside a text":      sdkEncoded(t, string(p.prefix)+"1\"", json.RawMessage(`{}`)),
	} {
		if got := p.splice(b); string(got) != string(b) {
			t.Errorf("%s: spliced into %s", name, got)
		}
	}
	if len(p.held) != 1 {
		t.Fatalf("held %d: the lookalikes took a held result", len(p.held))
	}
}

func TestSplicedIsBounded(t *testing.T) {
	p := newSpliced()
	for range maxHeld {
		p.hold(json.RawMessage(`{}`))
	}
	b := json.RawMessage(`{"over":true}`)
	got := p.hold(b)
	if string(got.(json.RawMessage)) != string(b) {
		t.Fatalf("hold past %d gave %s: want the result itself, for the SDK to encode", maxHeld, got)
	}
	// Such a result goes whole through a splice, which finds nothing held
	// in it.
	enc := sdkEncoded(t, "x", got)
	if out := p.splice(enc); string(out) != string(enc) || !strings.Contains(string(out), `"structuredContent":{"over":true}`) {
		t.Fatalf("a result past the bound, spliced: %s", out)
	}
}
