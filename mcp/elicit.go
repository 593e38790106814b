package mcp

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// inputKey names the one input a call of arca's asks of the client: a
// human's visit to a page of arca's (URL-mode elicitation).
const inputKey = "arca_page"

// A call that needs a human is answered in MCP's own terms: it asks the
// client to send its user to a loopback page of arca's (URL mode: the
// page's own rules, its token and CSRF, keep the agent out; no form mode,
// which would carry what the human typed through MCP). With 2026-07-28
// and later the answer is an input-required result the client retries
// with the user's response; with 2025-11-25 the SDK asks the client
// itself (elicitation/create) and calls the tool again with the response.
// Either way the retry carries what is waited for in its request state,
// which arca signs: a client can return it, not forge or alter it.

// waiting is what a call waits for: a kind (approval, request) and an id.
type waiting struct{ kind, id string }

// canVisit reports whether r's client can send its user to a URL.
func canVisit(r *sdk.CallToolRequest) bool {
	caps := r.ClientCapabilities()
	return caps != nil && caps.Elicitation != nil && caps.Elicitation.URL != nil
}

// askVisit is the result that asks r's client to send its user to url
// (message says why), the retry to carry w; nil when the client cannot.
func (s *session) askVisit(r *sdk.CallToolRequest, w waiting, url, message string) *sdk.CallToolResult {
	if url == "" || !canVisit(r) {
		return nil
	}
	return &sdk.CallToolResult{
		InputRequests: sdk.InputRequestMap{inputKey: &sdk.ElicitParams{Mode: "url", Message: message, URL: url, ElicitationID: w.id}},
		RequestState:  s.sign(w),
	}
}

// resumed is what a retry of r waits for and whether the user agreed to
// go (accept); ok is false for a call that is no retry. A request state
// arca did not sign, or a retry that lacks the user's answer, is
// bad_request.
func (s *session) resumed(r *sdk.CallToolRequest) (w waiting, accepted, ok bool, err error) {
	p := r.Params
	if p.RequestState == "" && p.InputResponses == nil {
		return waiting{}, false, false, nil
	}
	w, good := s.verify(p.RequestState)
	if !good {
		return waiting{}, false, true, ops.Errorf(manifest.BadRequest, "the request state is not one arca gave")
	}
	res, _ := p.InputResponses[inputKey].(*sdk.ElicitResult)
	if res == nil {
		return waiting{}, false, true, ops.Errorf(manifest.BadRequest, "the retry carries no answer to %q", inputKey)
	}
	return w, res.Action == "accept", true, nil
}

// sign is w as a request state: kind, id and their HMAC under the
// session's key.
func (s *session) sign(w waiting) string {
	m := hmac.New(sha256.New, s.stateKey)
	m.Write([]byte(w.kind + ":" + w.id))
	return w.kind + ":" + w.id + ":" + hex.EncodeToString(m.Sum(nil))
}

// verify is the waiting a request state signed by sign names.
func (s *session) verify(state string) (waiting, bool) {
	kind, rest, ok1 := strings.Cut(state, ":")
	id, _, ok2 := strings.Cut(rest, ":")
	if !ok1 || !ok2 {
		return waiting{}, false
	}
	w := waiting{kind: kind, id: id}
	return w, hmac.Equal([]byte(s.sign(w)), []byte(state))
}

// newStateKey is a fresh key for signing request states.
func newStateKey() []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	return k
}
