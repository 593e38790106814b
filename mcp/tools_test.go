package mcp

// Every tool of the table through a session in process: each success's
// shape and each error a caller meets.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/opstest"
	"github.com/arca-secrets/arca/pdp"
	"github.com/arca-secrets/arca/vault"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// received is one request an echo upstream received, whole.
type received struct {
	method, path string
	header       http.Header
	body         []byte
}

// echoUpstream is a loopback HTTP server that records every request and
// answers with handle, or with the request echoed whole (method, path,
// headers, body) when handle is nil.
type echoUpstream struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []received
}

func newEchoUpstream(t *testing.T, handle http.HandlerFunc) *echoUpstream {
	t.Helper()
	u := &echoUpstream{}
	if handle == nil {
		handle = echoWhole
	}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.got = append(u.got, received{r.Method, r.URL.Path, r.Header.Clone(), body})
		u.mu.Unlock()
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		handle(w, r)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

// echoWhole answers the request's method, path, Authorization, every
// header and the body.
func echoWhole(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"method": r.Method, "path": r.URL.Path,
		"authorization": r.Header.Get("Authorization"), "headers": r.Header, "body": string(body)})
}

func (u *echoUpstream) requests() []received {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]received(nil), u.got...)
}

// service is the TOML of a bearer service on u, credential ref, every
// path, loopback allowed; extra is appended.
func (u *echoUpstream) service(name, ref, extra string) string {
	return serviceAt(name, u.srv.URL, ref, extra)
}

func serviceAt(name, base, ref, extra string) string {
	return fmt.Sprintf("[services.%s]\nbase_url = %q\ncredential = %q\nauth = \"bearer\"\nmethods = [\"GET\", \"POST\"]\npaths = [\"/*\"]\nallow_private = true\n%s\n",
		name, base, ref, extra)
}

// closedPort is a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// pathEnv is an environment in which an action finds sh.
func pathEnv() []string { return []string{"PATH=" + os.Getenv("PATH")} }

// put stores value at ref through the fixture's own service.
func (h *harness) put(ref, value string) {
	h.t.Helper()
	if _, err := h.fix.Service.Put(context.Background(), ops.Request{Ref: ref, Value: vault.NewSecret([]byte(value))}); err != nil {
		h.t.Fatal(err)
	}
}

// success holds res to a success's shape: the summary, and for a client
// whose protocol predates structured content the structured content's
// JSON as text after it (TestToolsAcrossProtocols holds each version to
// its form); it decodes the structured content into v and returns
// content[0], the summary.
func success(t *testing.T, res *sdk.CallToolResult, v any) string {
	t.Helper()
	if res.IsError {
		t.Fatalf("the call failed: %s", textOf(res, 0))
	}
	switch len(res.Content) {
	case 1:
		structured(t, res, v)
		return textOf(res, 0)
	case 2:
	default:
		t.Fatalf("%d content items, want the summary (and for an old protocol the JSON)", len(res.Content))
	}
	var fromText any
	if err := json.Unmarshal([]byte(textOf(res, 1)), &fromText); err != nil {
		t.Fatalf("content[1] is not JSON: %v", err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var fromStructured any
	_ = json.Unmarshal(b, &fromStructured)
	if !reflect.DeepEqual(fromText, fromStructured) {
		t.Errorf("content[1] %s is not the structured content %s", textOf(res, 1), b)
	}
	structured(t, res, v)
	return textOf(res, 0)
}

// wantSummary fails the test unless got is want.
func wantSummary(t *testing.T, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
}

// textOf is the text of content item i, "" if there is none.
func textOf(res *sdk.CallToolResult, i int) string {
	if i >= len(res.Content) {
		return ""
	}
	if tc, ok := res.Content[i].(*sdk.TextContent); ok {
		return tc.Text
	}
	return ""
}

// failsWith holds res to a tool error of code whose message holds msg;
// its text is "TOOL failed: CODE: MESSAGE".
func failsWith(t *testing.T, tool string, res *sdk.CallToolResult, code, msg string) wireError {
	t.Helper()
	e := toolError(t, res)
	if string(e.Code) != code || !strings.Contains(e.Message, msg) {
		t.Errorf("%s: error %+v, want %s holding %q", tool, e, code, msg)
	}
	if want := fmt.Sprintf("%s failed: %s: %s", tool, e.Code, e.Message); textOf(res, 0) != want {
		t.Errorf("%s: text %q, want %q", tool, textOf(res, 0), want)
	}
	return e
}

// event is the one event of op whose outcome is outcome, failing the test
// when there is not exactly one.
func (h *harness) event(op, outcome string) audit.Event {
	h.t.Helper()
	var found []audit.Event
	for _, ev := range opstest.Events(h.t, h.events.Bytes()) {
		if ev.Op == op && ev.Outcome == outcome {
			found = append(found, ev)
		}
	}
	if len(found) != 1 {
		h.t.Fatalf("%d %s events of %s, want 1:\n%s", len(found), outcome, op, h.events.Bytes())
	}
	return found[0]
}

func denyReason(reason string) func(pdp.Request) pdp.Verdict {
	return func(pdp.Request) pdp.Verdict { return pdp.Verdict{Allow: false, Reason: reason} }
}

// TestHistoryTool: arca_history answers history's result; an unknown ref
// is not_found; the PDP's deny and a guardrail's are denied with their
// reasons; a ref that is no ref and a missing one are bad_request.
func TestHistoryTool(t *testing.T) {
	h := newHarness(t, harnessOptions{actor: "agent-h", config: "[[guardrails.rule]]\nops = [\"history\"]\nref = \"billing/*\"\nreason = \"no billing history\"\n"})
	h.put("arca://app/db", "v-one-canary")
	h.put("arca://app/db", "v-two-canary")
	h.put("arca://billing/key", "b-canary")
	var out ops.HistoryResult
	wantSummary(t, success(t, h.call("arca_history", map[string]any{"ref": "arca://app/db"}), &out), "arca://app/db: current version 2, 2 versions kept")
	if out.Ref != "arca://app/db" || out.Env != "default" || out.Current == nil || *out.Current != 2 || len(out.Versions) != 2 || out.Versions[0].Version != 2 {
		t.Fatalf("history = %+v", out)
	}
	failsWith(t, "arca_history", h.call("arca_history", map[string]any{"ref": "arca://app/nothing"}), "not_found", "")
	failsWith(t, "arca_history", h.call("arca_history", map[string]any{"ref": "arca://billing/key"}), "denied", "no billing history")
	failsWith(t, "arca_history", h.call("arca_history", map[string]any{"ref": "not a ref"}), "bad_request", "")
	failsWith(t, "arca_history", h.call("arca_history", map[string]any{}), "bad_request", "ref")
	failsWith(t, "arca_history", h.call("arca_history", map[string]any{"ref": 7}), "bad_request", `"ref" must be a string`)
	if ev := h.event("history", "ok"); ev.Actor != "agent-h" || ev.Client != "harness-client" || ev.Ref != "app/db" {
		t.Errorf("history event %+v", ev)
	}
	if strings.Contains(string(h.transcript.Bytes()), "-canary") {
		t.Fatal("a value reached an MCP message")
	}

	denied := newHarness(t, harnessOptions{decide: denyReason("history is not for agents")})
	denied.put("arca://app/db", "v")
	failsWith(t, "arca_history", denied.call("arca_history", map[string]any{"ref": "arca://app/db"}), "denied", "history is not for agents")
	if asked := denied.decider.requests(); len(asked) != 1 || asked[0].Op != "history" || asked[0].Client != "harness-client" {
		t.Errorf("the PDP was asked %+v", asked)
	}
}

// TestChangesTool: arca_changes without since answers the current
// cursor; with it, the names changed since; a cursor that is none is
// bad_request; the PDP's deny and a guardrail's are denied.
func TestChangesTool(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	var first ops.ChangesResult
	sum := success(t, h.call("arca_changes", map[string]any{}), &first)
	if first.Env != "default" || first.Cursor == "" || len(first.Changes) != 0 {
		t.Fatalf("changes = %+v", first)
	}
	wantSummary(t, sum, "0 changes in env default; next cursor "+first.Cursor)
	h.put("arca://app/db", "changes-canary")
	var next ops.ChangesResult
	sum = success(t, h.call("arca_changes", map[string]any{"since": first.Cursor}), &next)
	if len(next.Changes) != 1 || next.Changes[0].Ref != "arca://app/db" || next.Changes[0].Version != 1 || next.Cursor == first.Cursor {
		t.Fatalf("changes since %s = %+v", first.Cursor, next)
	}
	wantSummary(t, sum, "1 change in env default; next cursor "+next.Cursor)
	failsWith(t, "arca_changes", h.call("arca_changes", map[string]any{"since": "not-a-cursor"}), "bad_request", "")
	failsWith(t, "arca_changes", h.call("arca_changes", map[string]any{"since": 3}), "bad_request", `"since" must be a string`)
	failsWith(t, "arca_changes", h.call("arca_changes", map[string]any{"env": "nowhere"}), "bad_request", "nowhere")

	guarded := newHarness(t, harnessOptions{config: "[[guardrails.rule]]\nops = [\"changes\"]\nreason = \"no changes feed\"\n"})
	failsWith(t, "arca_changes", guarded.call("arca_changes", map[string]any{}), "denied", "no changes feed")
	if len(guarded.decider.requests()) != 0 {
		t.Error("the PDP was asked after a guardrail denied")
	}

	denied := newHarness(t, harnessOptions{decide: denyReason("no polling")})
	failsWith(t, "arca_changes", denied.call("arca_changes", map[string]any{}), "denied", "no polling")
}

// httpOut is a decoded result.http.
type httpOut struct {
	Service    string              `json:"service"`
	Status     int                 `json:"status"`
	Headers    map[string][]string `json:"headers"`
	Body       string              `json:"body"`
	Truncated  bool                `json:"truncated"`
	Redactions []struct {
		Ref   string `json:"ref"`
		Count int    `json:"count"`
	} `json:"redactions"`
}

// execOut is a decoded result.exec.
type execOut struct {
	Action    string `json:"action"`
	ExitCode  int    `json:"exit_code"`
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`
	Truncated struct {
		Stdout bool `json:"stdout"`
		Stderr bool `json:"stderr"`
	} `json:"truncated"`
}

// TestHTTPTool: arca_http answers http's result, the credential sent
// and scrubbed; an unknown service, a header that carries credentials and
// an argument http does not take are bad_request, and never reach the
// upstream; a method the service does not allow and the PDP's deny are
// denied; a closed port is upstream_failed with its cause.
func TestHTTPTool(t *testing.T) {
	const tok = "http-tool-canary-71be"
	u := newEchoUpstream(t, nil)
	h := newHarness(t, harnessOptions{config: u.service("api", "arca://svc/token", "") + serviceAt("gone", closedPort(t), "arca://svc/token", "") +
		"[[guardrails.rule]]\nops = [\"http\"]\nref = \"svc/guarded\"\nreason = \"not that credential\"\n" + u.service("guarded", "arca://svc/guarded", ""),
		decide: func(r pdp.Request) pdp.Verdict {
			if r.Use != nil && r.Use.Path == "/forbidden" {
				return pdp.Verdict{Reason: "not that path"}
			}
			return pdp.Verdict{Allow: true}
		}})
	h.put("arca://svc/token", tok)
	h.put("arca://svc/guarded", "guarded-canary")
	var out httpOut
	sum := success(t, h.call("arca_http", map[string]any{"service": "api", "method": "POST", "path": "/things", "body": "hello", "headers": map[string]any{"X-Extra": "e"}}), &out)
	if out.Service != "api" || out.Status != 200 || !strings.Contains(out.Body, `"body":"hello"`) || !strings.Contains(out.Body, "Bearer <redacted:svc/token>") {
		t.Fatalf("http = %+v", out)
	}
	wantSummary(t, sum, fmt.Sprintf("api answered 200 (%d bytes)", len(out.Body)))
	got := u.requests()
	if len(got) != 1 || got[0].header.Get("Authorization") != "Bearer "+tok || got[0].header.Get("X-Extra") != "e" || string(got[0].body) != "hello" {
		t.Fatalf("the upstream did not get the credential and the request (%d requests)", len(got))
	}
	for _, tc := range []struct {
		args       map[string]any
		code, want string
	}{
		{map[string]any{"service": "nope", "method": "GET", "path": "/"}, "bad_request", `unknown service "nope"`},
		{map[string]any{"service": "api", "method": "GET", "path": "/", "headers": map[string]any{"Authorization": "Bearer mine"}}, "bad_request", "Authorization carries credentials"},
		{map[string]any{"service": "api", "method": "GET", "path": "/", "ref": "arca://svc/token"}, "bad_request", `takes no argument "ref"`},
		{map[string]any{"service": "api", "method": "GET"}, "bad_request", "path"},
		{map[string]any{"service": "api", "method": "DELETE", "path": "/x"}, "denied", `method "DELETE" is not allowed`},
		{map[string]any{"service": "api", "method": "GET", "path": "/forbidden"}, "denied", "not that path"},
		{map[string]any{"service": "guarded", "method": "GET", "path": "/"}, "denied", "not that credential"},
	} {
		failsWith(t, "arca_http", h.call("arca_http", tc.args), tc.code, tc.want)
	}
	if n := len(u.requests()); n != 1 {
		t.Errorf("the upstream saw %d requests, want only the one allowed", n)
	}
	e := failsWith(t, "arca_http", h.call("arca_http", map[string]any{"service": "gone", "method": "GET", "path": "/"}), "upstream_failed", "")
	if e.Details["cause"] != "connect" {
		t.Errorf("closed port: details %v, want cause connect", e.Details)
	}
	if ev := h.event("http", "ok"); ev.Client != "harness-client" || ev.Use == nil || ev.Use.Service != "api" {
		t.Errorf("http event %+v", ev)
	}
}

// TestGrantExhaustedTool: an allow carrying arca:max_uses=1 covers one
// call; the second is denied, details.cause grant_exhausted, and never
// reaches the upstream.
func TestGrantExhaustedTool(t *testing.T) {
	u := newEchoUpstream(t, nil)
	h := newHarness(t, harnessOptions{actor: "agent-g", config: u.service("api", "arca://svc/token", ""),
		decide: func(pdp.Request) pdp.Verdict {
			return pdp.Verdict{Allow: true, Obligations: []string{"arca:max_uses=1"}}
		}})
	h.put("arca://svc/token", "grant-canary")
	args := map[string]any{"service": "api", "method": "GET", "path": "/once"}
	var out httpOut
	if sum := success(t, h.call("arca_http", args), &out); out.Status != 200 || !strings.HasPrefix(sum, "api answered 200 (") {
		t.Fatalf("the first call: %q", sum)
	}
	e := failsWith(t, "arca_http", h.call("arca_http", args), "denied", "grant exhausted")
	if e.Details["cause"] != "grant_exhausted" {
		t.Errorf("details %v, want cause grant_exhausted", e.Details)
	}
	if n := len(u.requests()); n != 1 {
		t.Errorf("the upstream saw %d requests, want 1", n)
	}
}

// TestActionTool: arca_action answers exec's result, the secret in the
// child's environment and scrubbed from its output; an unknown action
// and an argument the action does not allow are bad_request and run
// nothing; the PDP's deny and a guardrail's are denied.
func TestActionTool(t *testing.T) {
	const val = "action-tool-canary-0c3d"
	dir := t.TempDir()
	ran := dir + "/ran"
	cfg := fmt.Sprintf(`[actions.show]
argv = ["sh", "-c", 'printf "%%s|%%s\n" "$SECRET" "$1"; echo ran >> %s; printf err >&2', "show"]
args = "[a-z]+"
env = { SECRET = "arca://app/secret" }

[actions.guarded]
argv = ["sh", "-c", "echo ran >> %s"]
env = { G = "arca://app/guarded" }

[[guardrails.rule]]
ops = ["exec"]
ref = "app/guarded"
reason = "not this action"
`, ran, ran)
	h := newHarness(t, harnessOptions{config: cfg, environ: pathEnv(), decide: func(r pdp.Request) pdp.Verdict {
		return pdp.Verdict{Allow: r.Actor != "blocked", Reason: "blocked actor"}
	}})
	h.put("arca://app/secret", val)
	h.put("arca://app/guarded", "guarded-canary")
	var out execOut
	wantSummary(t, success(t, h.call("arca_action", map[string]any{"action": "show", "args": []string{"hello"}}), &out), "show exited 0")
	if out.Action != "show" || out.ExitCode != 0 || out.Stdout != "<redacted:app/secret>|hello\n" || out.Stderr != "err" {
		t.Fatalf("exec = %+v", out)
	}
	failsWith(t, "arca_action", h.call("arca_action", map[string]any{"action": "nope"}), "bad_request", `unknown action "nope"`)
	failsWith(t, "arca_action", h.call("arca_action", map[string]any{"action": "show", "args": []string{"Bad; rm"}}), "bad_request", "does not match")
	failsWith(t, "arca_action", h.call("arca_action", map[string]any{"action": "show", "args": "hello"}), "bad_request", "args")
	failsWith(t, "arca_action", h.call("arca_action", map[string]any{"action": "guarded"}), "denied", "not this action")
	if b, _ := os.ReadFile(ran); string(b) != "ran\n" {
		t.Errorf("the actions ran %q times' worth, want once", b)
	}
	if strings.Contains(string(h.transcript.Bytes()), val) {
		t.Fatal("the value reached an MCP message")
	}

	blocked := newHarness(t, harnessOptions{config: cfg, environ: pathEnv(), actor: "blocked", decide: func(r pdp.Request) pdp.Verdict {
		return pdp.Verdict{Allow: r.Actor != "blocked", Reason: "blocked actor"}
	}})
	blocked.put("arca://app/secret", val)
	failsWith(t, "arca_action", blocked.call("arca_action", map[string]any{"action": "show", "args": []string{"x"}}), "denied", "blocked actor")
	if ev := blocked.event("exec", "denied"); ev.Actor != "blocked" || ev.Policy == nil || ev.Policy.Allow {
		t.Errorf("the deny's event %+v", ev)
	}
}

// TestUnknownTool: a tool arca does not offer is a protocol error, and no
// op runs.
func TestUnknownTool(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	_, err := h.session.CallTool(context.Background(), &sdk.CallToolParams{Name: "arca_get", Arguments: map[string]any{"ref": "arca://app/db"}})
	if err == nil || !strings.Contains(err.Error(), "arca_get") {
		t.Fatalf("call of an unknown tool: %v, want a protocol error naming it", err)
	}
	if len(h.decider.requests()) != 0 {
		t.Fatal("the PDP was asked for an unknown tool")
	}
	if evs := opstest.Events(t, h.events.Bytes()); len(evs) != 1 || evs[0].Event != "start" {
		t.Fatalf("events after an unknown tool: %s", h.events.Bytes())
	}
	// the session goes on
	if res := h.call("arca_list", map[string]any{}); res.IsError {
		t.Fatalf("arca_list after an unknown tool failed: %s", textOf(res, 0))
	}
}

// TestToolsAcrossProtocols: under each protocol version a client may
// ask for, a use runs and its event and the PDP's input carry the
// client's name (given at initialize, or with each request).
func TestToolsAcrossProtocols(t *testing.T) {
	for _, version := range []string{"2024-11-05", "2025-06-18", "2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			u := newEchoUpstream(t, nil)
			h := newHarness(t, harnessOptions{protocol: version, client: "client-" + version, actor: "agent-v",
				config: u.service("api", "arca://svc/token", "")})
			h.put("arca://svc/token", "protocol-canary-token")
			var out httpOut
			res := h.call("arca_http", map[string]any{"service": "api", "method": "GET", "path": "/v"})
			success(t, res, &out)
			if want := map[bool]int{true: 2, false: 1}[version < structuredSince]; len(res.Content) != want {
				t.Errorf("%d content items under %s, want %d", len(res.Content), version, want)
			}
			if out.Status != 200 {
				t.Fatalf("status %d", out.Status)
			}
			if got := h.session.InitializeResult().ProtocolVersion; got != version {
				t.Fatalf("negotiated %s, want %s", got, version)
			}
			if ev := h.event("http", "ok"); ev.Client != "client-"+version || ev.Actor != "agent-v" {
				t.Errorf("event client %q actor %q", ev.Client, ev.Actor)
			}
			if asked := h.decider.requests(); len(asked) != 1 || asked[0].Client != "client-"+version {
				t.Errorf("the PDP was asked %+v", asked)
			}
		})
	}
}

// TestConcurrentCalls: calls sent together are each answered, whole, on
// lines of their own, and each audited once.
func TestConcurrentCalls(t *testing.T) {
	u := newEchoUpstream(t, nil)
	h := newHarness(t, harnessOptions{config: u.service("api", "arca://svc/token", "")})
	h.put("arca://svc/token", "concurrent-canary-token")
	const n = 16
	errs := make(chan error, n)
	for i := range n {
		go func() {
			res, err := h.session.CallTool(context.Background(), &sdk.CallToolParams{Name: "arca_http",
				Arguments: map[string]any{"service": "api", "method": "GET", "path": fmt.Sprintf("/c%d", i)}})
			switch {
			case err != nil:
				errs <- err
			case res.IsError:
				errs <- fmt.Errorf("call %d: %s", i, textOf(res, 0))
			default:
				var out httpOut
				b, _ := json.Marshal(res.StructuredContent)
				if err := json.Unmarshal(b, &out); err != nil || !strings.Contains(out.Body, fmt.Sprintf(`"path":"/c%d"`, i)) {
					errs <- fmt.Errorf("call %d answered another's body: %.80s", i, out.Body)
					return
				}
				errs <- nil
			}
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if got := len(callLines(t, h.transcript.Bytes())); got != n {
		t.Errorf("%d answer lines in the transcript, want %d", got, n)
	}
	var uses int
	for _, ev := range opstest.Events(t, h.events.Bytes()) {
		if ev.Op == "http" && ev.Outcome == "ok" {
			uses++
		}
	}
	if uses != n || len(u.requests()) != n {
		t.Errorf("%d events and %d upstream requests, want %d", uses, len(u.requests()), n)
	}
}
