package mcp

import (
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestFitsAgreesWithEncoding: fits says what encoding the output says,
// whether it skips the encoding (well under the cap) or not (near it and
// past it), for text that encodes as itself, text that escapes to six
// bytes a byte (< as \u003c, control bytes) and structured content of
// either.
func TestFitsAgreesWithEncoding(t *testing.T) {
	var fit, over int
	for _, c := range []string{"a", "<", "\x01"} {
		for _, n := range []int{0, 5000, 10000, 21000, 21800, 21900, 22000, 43000, 43600, 43700, 65000, 130000, 131000, 131100, 140000} {
			text := strings.Repeat(c, n)
			raw := text
			if c == "\x01" {
				raw = strings.Repeat("a", n) // a control byte is no JSON in a string
			}
			out := &sdk.CallToolResult{
				Content:           []sdk.Content{&sdk.TextContent{Text: "listed"}, &sdk.TextContent{Text: text}},
				StructuredContent: json.RawMessage(`{"t":"` + raw + `"}`),
			}
			b, err := json.Marshal(out)
			if err != nil {
				t.Fatal(err)
			}
			want := len(b)+envelope <= MaxOutput
			if got := fits(out); got != want {
				t.Errorf("%d × %q: fits = %v, but it encodes to %d bytes (cap %d less the envelope)", n, c, got, len(b), MaxOutput)
			}
			if want {
				fit++
			} else {
				over++
			}
		}
	}
	if fit == 0 || over == 0 {
		t.Fatalf("%d outputs fit and %d did not: both are needed", fit, over)
	}
}
