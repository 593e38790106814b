package mcp

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/serve/approvalpage"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// output makes res t's output: the op's result as structured content (as
// serve would answer it, under the op's result schema) and a short text
// summary (for a client whose protocol version predates structured
// content, the result's JSON follows the summary as text); all of it scrubbed
// against every credential the session used, and the whole of it at most
// MaxOutput bytes encoded with the response around it: a result that
// would be larger is cut (cut.go), saying so in its own fields.
func (s *session) output(t tool, res ops.Result) *sdk.CallToolResult {
	budget := MaxOutput / 2
	for range 8 {
		out, err := s.encodeResult(res, budget)
		if err != nil {
			return s.failed(t, err)
		}
		if fits(out) {
			if raw, ok := out.StructuredContent.(json.RawMessage); ok {
				out.StructuredContent = s.spliced.hold(raw)
			}
			return out
		}
		budget /= 2
	}
	return s.failed(t, ops.Errorf(manifest.OpError, "the result does not fit in %d bytes", MaxOutput))
}

// envelope is room for what goes on a result's line around it: the
// JSON-RPC response's members and id, and what the SDK adds (the
// server's _meta, resultType). The line, not the result alone, is held to
// MaxOutput.
const envelope = 1 << 10

// encodeResult encodes res, cut to at most budget bytes of JSON.
func (s *session) encodeResult(res ops.Result, budget int) (*sdk.CallToolResult, error) {
	res = cut(res, budget)
	b, err := encode(res)
	if err != nil {
		return nil, err
	}
	// JSON that nothing was redacted from is as it was encoded: valid.
	if scrubbed, rs := s.scrubs.Scrub(b); len(rs) > 0 {
		if b = scrubbed; !json.Valid(b) {
			return nil, ops.Errorf(manifest.OpError, "the result could not be scrubbed as JSON")
		}
	}
	content := []sdk.Content{&sdk.TextContent{Text: string(s.scrub([]byte(summary(res))))}}
	if s.textJSON.Load() {
		content = append(content, &sdk.TextContent{Text: string(b)})
	}
	return &sdk.CallToolResult{Content: content, StructuredContent: json.RawMessage(b)}, nil
}

// structuredSince is the first protocol version that has structured
// content: a client that negotiated an earlier one reads the result as
// text, after the summary.
const structuredSince = "2025-06-18"

// noteProtocol notes whether r's client negotiated a protocol version
// that predates structured content.
func (s *session) noteProtocol(r *sdk.CallToolRequest) {
	if p := r.Session.InitializeParams(); p != nil && p.ProtocolVersion != "" {
		s.textJSON.Store(p.ProtocolVersion < structuredSince)
	}
}

// encode encodes a result as serve does: one that holds an outcome
// encodes itself; encoding/json marshals the others.
func encode(res ops.Result) ([]byte, error) {
	if v, ok := res.(interface{ AppendJSON([]byte) []byte }); ok {
		return v.AppendJSON(nil), nil
	}
	b, err := json.Marshal(res)
	if err != nil {
		return nil, ops.Errorf(manifest.OpError, "encode the result: %v", err)
	}
	return b, nil
}

// scrub scrubs b against every credential the session used.
func (s *session) scrub(b []byte) []byte {
	out, _ := s.scrubs.Scrub(b)
	return out
}

// fits reports whether out, encoded as it goes on the wire, leaves room
// for the envelope around it within MaxOutput. Encoding escapes no byte to more than six (\u00XX), so a
// result whose structured content and texts are small enough fits
// without being encoded to measure it; only a larger one is.
func fits(out *sdk.CallToolResult) bool {
	raw, ok := out.StructuredContent.(json.RawMessage)
	bound := 6*len(raw) + 256
	for _, c := range out.Content {
		t, text := c.(*sdk.TextContent)
		ok = ok && text
		if text {
			bound += 6*len(t.Text) + 64
		}
	}
	if ok && bound+envelope <= MaxOutput {
		return true
	}
	b, err := json.Marshal(out)
	return err == nil && len(b)+envelope <= MaxOutput
}

// failed makes err t's output: a tool error (isError), its text the code
// and message, its structured content {"error": {code, message,
// details}} as serve would answer it. It never holds a value: an ops
// error's message never does, and it is scrubbed all the same.
func (s *session) failed(t tool, err error) *sdk.CallToolResult {
	return s.failedWith(t, errorOf(err, s.page))
}

// failedWith is the tool error of e, as failed makes it.
func (s *session) failedWith(t tool, e wireError) *sdk.CallToolResult {
	b, merr := json.Marshal(map[string]any{"error": e})
	if merr != nil || len(b) > MaxOutput/2 {
		b = []byte(`{"error":{"code":"op_error","message":"the error could not be encoded"}}`)
	}
	b = s.scrub(b)
	text := s.scrub(fmt.Appendf(nil, "%s failed: %s: %s", t.name, e.Code, e.Message))
	if !json.Valid(b) {
		b = []byte(`{"error":{"code":"op_error","message":"the error could not be scrubbed as JSON"}}`)
	}
	// The error goes as text alone: structured content would have to match
	// the tool's output schema, which describes its result (clients check
	// it, some even on an error).
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: string(text)}, &sdk.TextContent{Text: string(b)}}}
}

// wireError is an error as serve's error object has it.
type wireError struct {
	Code    manifest.Code  `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitempty"`
}

// errorOf is err as serve's error object has it; an approval's url is
// its page's, when page runs.
func errorOf(err error, page *approvalpage.Server) wireError {
	e := wireError{Code: ops.CodeOf(err), Message: validText(err.Error())}
	d := map[string]any{}
	if c := ops.CauseOf(err); c != "" {
		d["cause"] = c
	}
	if v, ok := ops.ConflictOf(err); ok {
		d["current_version"] = v
	}
	if a := ops.ApprovalOf(err); a != nil {
		ap := map[string]any{"id": a.ID, "summary": a.Summary, "fingerprint": a.Fingerprint, "expires_at": ops.Time{Time: a.ExpiresAt}}
		if page != nil {
			ap["url"] = page.URL(a.ID)
		}
		d["approval"] = ap
	}
	if len(d) > 0 {
		e.Details = d
	}
	return e
}

// validText is s with any byte that is not UTF-8 replaced.
func validText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return string([]rune(s))
}
