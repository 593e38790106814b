package mcp

// The canary: a session that used a credential through arca_http and
// arca_action carries it in no MCP message, either way, and in no audit
// event, in any form the scrub engine knows that a test can make.

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// canaryValue holds characters JSON escapes (" / < >), so that its
// JSON-escaped forms differ from it.
const canaryValue = `CANARY-mcp-"q"/<x>-9f3e7a1c`

// canaryForms are v and the forms a message could carry it in: JSON-escaped
// (encoding/json's, and without HTML escapes), base64 (its unpadded
// start) and hex, lower and upper case.
func canaryForms(v string) map[string]string {
	j, _ := json.Marshal(v)
	var plain strings.Builder
	enc := json.NewEncoder(&plain)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	p := strings.TrimSpace(plain.String())
	b64 := base64.StdEncoding.EncodeToString([]byte(v))
	h := hex.EncodeToString([]byte(v))
	return map[string]string{"raw": v, "json": string(j[1 : len(j)-1]), "json-plain": p[1 : len(p)-1],
		"base64": strings.TrimRight(b64, "="), "hex": h, "HEX": strings.ToUpper(h)}
}

// noCanary fails the test for each form of v found in b, naming the form
// and where, never the value.
func noCanary(t *testing.T, where string, b []byte, v string) {
	t.Helper()
	for name, form := range canaryForms(v) {
		if strings.Contains(string(b), form) {
			t.Errorf("%s holds the credential's %s form", where, name)
		}
	}
}

// TestCanaryNeverInTranscript: arca_http against an upstream that echoes
// the whole request (its Authorization header, every header, the body)
// and the credential once more in base64 and hex, and an action that
// prints its secret raw, base64, hex and JSON-escaped: the transcript,
// both ways, and every audit event hold none of those forms, though the
// upstream received the credential and the action's child saw it.
func TestCanaryNeverInTranscript(t *testing.T) {
	u := newEchoUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		w.Header().Set("X-Echo", tok)
		w.Header().Set("X-Echo-Hex", hex.EncodeToString([]byte(tok)))
		body := map[string]any{"authorization": r.Header.Get("Authorization"), "headers": r.Header,
			"b64": base64.StdEncoding.EncodeToString([]byte(tok)), "hex": hex.EncodeToString([]byte(tok))}
		_ = json.NewEncoder(w).Encode(body)
	})
	seen := filepath.Join(t.TempDir(), "seen")
	cfg := u.service("api", "arca://svc/token", "") + fmt.Sprintf(`
[actions.leak]
argv = ["sh", "-c", 'printf "raw=%%s\n" "$S"; printf "%%s" "$S" | base64; printf "%%s" "$S" | od -An -tx1 | tr -d " \n"; echo; printf "{\"v\":\"%%s\"}\n" "$(printf "%%s" "$S" | sed "s/\"/\\\\\"/g")"; printf "%%s" "$S" | od -An -tx1 | tr -d " \n" > %s']
env = { S = "arca://svc/token" }
`, seen)
	h := newHarness(t, harnessOptions{actor: "agent-c", config: cfg, environ: pathEnv()})
	h.put("arca://svc/token", canaryValue)

	var out httpOut
	success(t, h.call("arca_http", map[string]any{"service": "api", "method": "POST", "path": "/echo", "body": "ping"}), &out)
	if out.Status != 200 || !strings.Contains(out.Body, "<redacted:svc/token>") {
		t.Fatalf("http: status %d, body without the redaction", out.Status)
	}
	var ex execOut
	success(t, h.call("arca_action", map[string]any{"action": "leak"}), &ex)
	if ex.ExitCode != 0 || strings.Count(ex.Stdout, "<redacted:svc/token>") < 4 {
		t.Errorf("exec: exit %d, stdout %d bytes: want every printed form redacted", ex.ExitCode, len(ex.Stdout))
	}

	// Positive controls: the upstream received the credential; the child
	// saw it.
	got := u.requests()
	if len(got) != 1 || got[0].header.Get("Authorization") != "Bearer "+canaryValue {
		t.Fatalf("the upstream did not receive the credential (%d requests)", len(got))
	}
	if b, err := os.ReadFile(seen); err != nil || string(b) != hex.EncodeToString([]byte(canaryValue)) {
		t.Fatalf("the action's child did not see the credential (%v)", err)
	}
	tr := h.transcript.Bytes()
	if !strings.Contains(string(tr), `"arca_action"`) || !strings.Contains(string(tr), "redacted:svc/token") {
		t.Fatal("the transcript does not hold the calls")
	}
	noCanary(t, "the transcript", tr, canaryValue)
	noCanary(t, "the audit events", h.events.Bytes(), canaryValue)
	// Its ends, which no escaping changes, catch it escaped twice (as the
	// text beside the structured content carries it) or in any other
	// form that keeps them.
	for _, end := range []string{"CANARY-mcp-", "-9f3e7a1c"} {
		if strings.Contains(string(tr), end) || strings.Contains(string(h.events.Bytes()), end) {
			t.Errorf("the transcript or the events hold the credential's end %q", end)
		}
	}
}

// TestScrubAcrossTools: once arca_http used credential A, an action's
// output that holds A, though the action has no secret of its own (its
// argv prints a config constant equal to A), is scrubbed: the session's
// scrub set holds every credential it used; so are the answer and the
// event of a call refused for arguments that quote A. Before the use,
// the same action's output holds A: the positive control.
func TestScrubAcrossTools(t *testing.T) {
	const a = "cross-tool-canary-5e2a9f0b"
	u := newEchoUpstream(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) })
	cfg := u.service("api", "arca://svc/a", "") + fmt.Sprintf("[actions.constant]\nargv = [\"printf\", \"const=%%s\\n\", %q]\n", a)
	h := newHarness(t, harnessOptions{config: cfg, environ: pathEnv()})
	h.put("arca://svc/a", a)

	var before, after execOut
	success(t, h.call("arca_action", map[string]any{"action": "constant"}), &before)
	if before.Stdout != "const="+a+"\n" {
		t.Fatalf("before any use, the action printed %d bytes, not the constant", len(before.Stdout))
	}
	var out httpOut
	success(t, h.call("arca_http", map[string]any{"service": "api", "method": "GET", "path": "/"}), &out)
	if got := u.requests(); len(got) != 1 || got[0].header.Get("Authorization") != "Bearer "+a {
		t.Fatal("the upstream did not receive credential A")
	}
	res := h.call("arca_action", map[string]any{"action": "constant"})
	success(t, res, &after)
	if after.Stdout != "const=<redacted:svc/a>\n" {
		t.Errorf("after the use, the action's stdout is %d bytes, want A redacted", len(after.Stdout))
	}
	b, _ := json.Marshal(res)
	noCanary(t, "the action's answer after the use", b, a)

	// Arguments that name A are refused, quoting it: neither the answer
	// nor the event holds it.
	for _, args := range []map[string]any{{a: 1}, {"env": a + "/x"}} {
		res := h.call("arca_list", args)
		e := toolError(t, res)
		if e.Code != "bad_request" || !strings.Contains(e.Message, "<redacted:svc/a>") {
			t.Errorf("refused: %s: %s, want bad_request quoting A redacted", e.Code, e.Message)
		}
		b, _ := json.Marshal(res)
		noCanary(t, "a refusal's answer", b, a)
	}
	noCanary(t, "the audit events", h.events.Bytes(), a)
}
