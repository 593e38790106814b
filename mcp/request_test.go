package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/opstest"
	"github.com/arca-secrets/arca/pdp"
	"github.com/arca-secrets/arca/serve/approvalpage"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The page's config and its approver's token are approval_test.go's.

// requestCanary is the value a human types in these tests: it must reach
// the vault and nothing else.
const requestCanary = "canary-rq-7f3a9c2e51d04b86"

// urlClient is the options of a client that can send its user to a URL,
// the user acting as visit does.
func urlClient(visit func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error)) *sdk.ClientOptions {
	return &sdk.ClientOptions{
		Capabilities:       &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{URL: &sdk.URLElicitationCapabilities{}}},
		ElicitationHandler: visit,
	}
}

// requestHarness is a harness whose session runs the page, with the
// approver's token in its environment.
func requestHarness(t *testing.T, o harnessOptions) *harness {
	t.Helper()
	o.config = pageConfig + o.config
	o.environ = append(o.environ, approvalpage.TokenEnv+"="+approverToken)
	return newHarness(t, o)
}

// pageAnswer is one answer of the page: its status and its JSON.
type pageAnswer struct {
	status int
	body   map[string]any
	raw    string
}

// visit sends method to the page's rawURL as a human's browser would:
// with token (none when ""), Origin and CSRF token when set, and body.
func visit(t *testing.T, method, rawURL, token, origin, csrf string, body []byte) pageAnswer {
	t.Helper()
	return visitAt(t, "", method, rawURL, token, origin, csrf, body)
}

// visitAt is visit with the Host header host ("": the URL's).
func visitAt(t *testing.T, host, method, rawURL, token, origin, csrf string, body []byte) pageAnswer {
	t.Helper()
	req, err := http.NewRequest(method, rawURL, bytes.NewReader(body))
	if err != nil {
		t.Errorf("%s %s: %v", method, rawURL, err)
		return pageAnswer{}
	}
	if host != "" {
		req.Host = host
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if csrf != "" {
		req.Header.Set(approvalpage.CSRFHeader, csrf)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("%s %s: %v", method, rawURL, err)
		return pageAnswer{}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	a := pageAnswer{status: resp.StatusCode, raw: string(b)}
	_ = json.Unmarshal(b, &a.body)
	return a
}

// human is the person at the page of one request: its URL, its origin
// and the CSRF token the request came with.
type human struct {
	t           *testing.T
	url, origin string
	csrf        string
	request     map[string]any // the request as the page showed it
	answers     []pageAnswer   // every POST's answer
}

// open reads the request's page with the token.
func open(t *testing.T, rawURL string) *human {
	t.Helper()
	u, err := url.Parse(rawURL)
	h := &human{t: t, url: rawURL}
	if err != nil || u.Scheme != "http" || !strings.HasPrefix(u.Path, "/requests/rq_") {
		t.Errorf("the request's URL is %q", rawURL)
		return h
	}
	h.origin = "http://" + u.Host
	a := visit(t, "GET", rawURL, approverToken, "", "", nil)
	if a.status != 200 {
		t.Errorf("GET %s: %d %s", rawURL, a.status, a.raw)
	}
	h.csrf, _ = a.body["csrf"].(string)
	h.request, _ = a.body["request"].(map[string]any)
	return h
}

// post posts value as the page's script would.
func (h *human) post(value string) pageAnswer {
	h.t.Helper()
	b, _ := json.Marshal(map[string]string{"value": value})
	a := visit(h.t, "POST", h.url, approverToken, h.origin, h.csrf, b)
	h.answers = append(h.answers, a)
	return a
}

// TestRequestSecretStored: in both protocol versions the client is asked
// to send its user to the request's page (URL mode, on the page's own
// origin); the human reads the ref, the env, the description and who
// asks there, types the value, and the tool answers the put's result,
// version 1. The vault holds the value typed (the positive control); no
// MCP message and no audit event holds it; the put was decided and
// recorded with the session's actor and the client's name.
func TestRequestSecretStored(t *testing.T) {
	for _, proto := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(proto, func(t *testing.T) {
			var asked *sdk.ElicitParams
			var page *human
			h := requestHarness(t, harnessOptions{actor: "agent-7", client: "probe-client", protocol: proto,
				options: urlClient(func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
					asked = req.Params
					page = open(t, req.Params.URL)
					if a := page.post(requestCanary); a.status != 200 {
						t.Errorf("POST: %d %s", a.status, a.raw)
					}
					return &sdk.ElicitResult{Action: "accept"}, nil
				})})
			res := h.call("arca_request_secret", map[string]any{"ref": "arca://app/api-key", "description": "the API key of <b>billing</b>\nfor the nightly job"})
			if res.IsError {
				t.Fatalf("the call failed: %+v", res.StructuredContent)
			}
			var out ops.PutResult
			structured(t, res, &out)
			if out.Ref != "arca://app/api-key" || out.Env != "default" || out.Version != 1 || !out.Created {
				t.Fatalf("result = %+v", out)
			}
			if asked == nil || asked.Mode != "url" || !strings.Contains(asked.Message, "arca://app/api-key") {
				t.Fatalf("the client was asked %+v", asked)
			}
			want := map[string]any{"ref": "arca://app/api-key", "env": "default", "state": "pending", "actor": "agent-7", "client": "probe-client",
				"description": "the API key of <b>billing</b>\nfor the nightly job"}
			for k, v := range want {
				if page.request[k] != v {
					t.Errorf("the page shows %s = %v, want %v", k, page.request[k], v)
				}
			}
			if a := page.answers[0]; a.body["request"].(map[string]any)["version"] != float64(1) || strings.Contains(a.raw, requestCanary) {
				t.Errorf("the POST answered %s", a.raw)
			}
			got, err := h.svc.Get(context.Background(), ops.Request{Ref: "arca://app/api-key"})
			if err != nil || string(got.Value.Reveal()) != requestCanary {
				t.Fatalf("the vault holds another value (err %v)", err)
			}
			if bytes.Contains(h.transcript.Bytes(), []byte(requestCanary)) {
				t.Error("the value reached an MCP message")
			}
			if bytes.Contains(h.events.Bytes(), []byte(requestCanary)) {
				t.Error("the value reached an audit event")
			}
			var put bool
			for _, ev := range opstest.Events(t, h.events.Bytes()) {
				put = put || ev.Event == "put" && ev.Outcome == "ok" && ev.Actor == "agent-7" && ev.Client == "probe-client" && ev.Ref == "app/api-key"
			}
			asked2 := h.decider.requests()
			if !put || len(asked2) != 2 || asked2[0].Op != "put" || asked2[0].Actor != "agent-7" || asked2[0].Client != "probe-client" {
				t.Fatalf("the put was not decided and recorded as the session's: PDP %+v\n%s", asked2, h.events.Bytes())
			}
		})
	}
}

// TestRequestPageRefusals: the page refuses a value without the token
// (401), from another origin or without the CSRF token (403), at a
// foreign Host (421), empty or not a string (400), over the cap (413),
// for an unknown request (404); a put the PDP denies is refused with its
// reason and leaves the request pending, and the human's next value is
// stored. None of it stores anything the human did not mean.
func TestRequestPageRefusals(t *testing.T) {
	var denyPut atomic.Bool
	denyPut.Store(true)
	var refusals []pageAnswer
	h := requestHarness(t, harnessOptions{
		decide: func(r pdp.Request) pdp.Verdict {
			if r.Op == "put" && denyPut.Load() {
				return pdp.Verdict{Reason: "no writes from this agent yet"}
			}
			return pdp.Verdict{Allow: true}
		},
		options: urlClient(func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			p := open(t, req.Params.URL)
			body, _ := json.Marshal(map[string]string{"value": requestCanary})
			u, _ := url.Parse(p.url)
			other := strings.Replace(p.url, "/requests/", "/requests/rq_0000000000000000000000000000ffff#", 1)
			other = strings.Split(other, "#")[0]
			refusals = append(refusals,
				visit(t, "POST", p.url, "", p.origin, p.csrf, body),
				visit(t, "POST", p.url, "wrong-token-0123456789abcdef", p.origin, p.csrf, body),
				visit(t, "GET", p.url, "", "", "", nil),
				visit(t, "POST", p.url, approverToken, "http://evil.example", p.csrf, body),
				visit(t, "POST", p.url, approverToken, "", p.csrf, body),
				visit(t, "POST", p.url, approverToken, p.origin, "", body),
				visitAt(t, "rebound.example:"+u.Port(), "POST", p.url, approverToken, p.origin, p.csrf, body),
				p.post(""),
				visit(t, "POST", p.url, approverToken, p.origin, p.csrf, []byte(`{"value": 42}`)),
				visit(t, "POST", p.url, approverToken, p.origin, p.csrf, []byte(`{"value": "a", "Value": "b"}`)),
				p.post(strings.Repeat("v", 64<<10+1)),
				visit(t, "POST", other, approverToken, p.origin, p.csrf, body),
				p.post(requestCanary), // the PDP denies it
			)
			denyPut.Store(false)
			if a := p.post(requestCanary); a.status != 200 {
				t.Errorf("the value after the refusals: %d %s", a.status, a.raw)
			}
			return &sdk.ElicitResult{Action: "accept"}, nil
		}),
	})
	res := h.call("arca_request_secret", map[string]any{"ref": "arca://app/db", "description": "the database password"})
	if res.IsError {
		t.Fatalf("the call failed: %+v", res.StructuredContent)
	}
	wantStatus := []int{401, 401, 401, 403, 403, 403, 421, 400, 400, 400, 413, 404, 409}
	if len(refusals) != len(wantStatus) {
		t.Fatalf("%d refusals", len(refusals))
	}
	for i, a := range refusals {
		if a.status != wantStatus[i] {
			t.Errorf("refusal %d: %d %s, want %d", i, a.status, a.raw, wantStatus[i])
		}
		if strings.Contains(a.raw, requestCanary) {
			t.Errorf("refusal %d echoes the value", i)
		}
	}
	if last := refusals[len(refusals)-1]; !strings.Contains(last.raw, "no writes from this agent yet") {
		t.Errorf("the PDP's refusal reads %s", last.raw)
	}
	var out ops.PutResult
	structured(t, res, &out)
	if out.Version != 1 {
		t.Fatalf("result = %+v: a refused value was stored", out)
	}
	if bytes.Contains(h.transcript.Bytes(), []byte(requestCanary)) || bytes.Contains(h.events.Bytes(), []byte(requestCanary)) {
		t.Error("the value reached an MCP message or an audit event")
	}
}

// TestRequestWithoutURLMode: a client that cannot send its user to a URL
// is answered a tool error holding the request's id, URL and expiry; a
// repeated call for the same ref shares the pending request, and once a
// human stored the value, answers the put's result, once: the next call
// asks anew.
func TestRequestWithoutURLMode(t *testing.T) {
	h := requestHarness(t, harnessOptions{})
	args := map[string]any{"ref": "arca://app/token", "description": "a token"}
	e := toolError(t, h.call("arca_request_secret", args))
	req, _ := e.Details["request"].(map[string]any)
	id, _ := req["id"].(string)
	rawURL, _ := req["url"].(string)
	if e.Code != "op_error" || !strings.HasPrefix(id, "rq_") || !strings.HasSuffix(rawURL, "/requests/"+id) || req["expires_at"] == nil || !strings.Contains(e.Message, rawURL) {
		t.Fatalf("error = %+v", e)
	}
	if again := toolError(t, h.call("arca_request_secret", args)); again.Details["request"].(map[string]any)["id"] != id {
		t.Fatalf("a repeated call asked anew: %+v", again)
	}
	if a := open(t, rawURL).post(requestCanary); a.status != 200 {
		t.Fatalf("POST: %d %s", a.status, a.raw)
	}
	res := h.call("arca_request_secret", args)
	var out ops.PutResult
	structured(t, res, &out)
	if res.IsError || out.Ref != "arca://app/token" || out.Version != 1 {
		t.Fatalf("result = %+v", res.StructuredContent)
	}
	if text := res.Content[0].(*sdk.TextContent).Text; text != "arca://app/token stored as version 1 in env default" {
		t.Errorf("the summary: %q", text)
	}
	if next := toolError(t, h.call("arca_request_secret", args)); next.Details["request"].(map[string]any)["id"] == id {
		t.Fatal("a result was answered twice")
	}
	if bytes.Contains(h.transcript.Bytes(), []byte(requestCanary)) {
		t.Error("the value reached an MCP message")
	}
	var asks []string
	for _, ev := range opstest.Events(t, h.events.Bytes()) {
		if ev.Event == "request.ask" && ev.Op == "put" && ev.Ref == "app/token" && ev.Client == "harness-client" {
			asks = append(asks, ev.Message)
		}
	}
	if len(asks) != 2 || !strings.HasPrefix(asks[0], id+": ") || !strings.Contains(asks[0], rawURL) || strings.Contains(string(h.events.Bytes()), "a token") {
		t.Errorf("request.ask events (one per request, the description in none): %q", asks)
	}
}

// TestRequestRefused: no page is op_error naming the config to set; a
// guardrail that denies the put refuses the ask itself (denied, audited);
// a user who will not open the page is denied; a bad description or ref
// is bad_request; a 21st open request is denied. No request state a
// client makes up is taken.
func TestRequestRefused(t *testing.T) {
	none := newHarness(t, harnessOptions{})
	if e := toolError(t, none.call("arca_request_secret", map[string]any{"ref": "arca://app/x", "description": "x"})); e.Code != "op_error" || !strings.Contains(e.Message, "[serve.approvals]") {
		t.Errorf("without a page: %+v", e)
	}

	guard := "[[guardrails.rule]]\nops = [\"put\"]\nref = \"locked/*\"\nreason = \"locked names\"\n"
	h := requestHarness(t, harnessOptions{config: guard, options: urlClient(func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		return &sdk.ElicitResult{Action: "decline"}, nil
	})})
	if e := toolError(t, h.call("arca_request_secret", map[string]any{"ref": "arca://locked/key", "description": "x"})); e.Code != "denied" || !strings.Contains(e.Message, "locked names") {
		t.Errorf("a guardrail: %+v", e)
	}
	var denied bool
	for _, ev := range opstest.Events(t, h.events.Bytes()) {
		denied = denied || ev.Event == "denied" && ev.Op == "put" && ev.Ref == "locked/key"
	}
	if !denied {
		t.Errorf("no denied event:\n%s", h.events.Bytes())
	}
	if e := toolError(t, h.call("arca_request_secret", map[string]any{"ref": "arca://app/key", "description": "x"})); e.Code != "denied" || !strings.Contains(e.Message, "would not open") {
		t.Errorf("declined: %+v", e)
	}
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"ref": "arca://app/key"}, "needs description"},
		{map[string]any{"description": "x"}, "needs ref"},
		{map[string]any{"ref": "arca://app/key", "description": ""}, "is empty"},
		{map[string]any{"ref": "arca://app/key", "description": "a\x1b[31m"}, "control character"},
		{map[string]any{"ref": "arca://app/key", "description": strings.Repeat("d", MaxDescription+1)}, "larger than 1024 bytes"},
		{map[string]any{"ref": "arca://app/key", "description": 7}, "must be a string"},
		{map[string]any{"ref": "arca://app/key", "description": "x", "value": "v"}, `takes no argument "value"`},
		{map[string]any{"ref": "app/key", "description": "x"}, "arca://"},
		{map[string]any{"ref": "arca://app/key", "env": "nope", "description": "x"}, `unknown env "nope"`},
	} {
		if e := toolError(t, h.call("arca_request_secret", tc.args)); e.Code != "bad_request" || !strings.Contains(e.Message, tc.want) {
			t.Errorf("%v: %+v, want bad_request with %q", tc.args, e, tc.want)
		}
	}

	forged, err := h.session.CallTool(context.Background(), &sdk.CallToolParams{Name: "arca_request_secret",
		Arguments:    map[string]any{"ref": "arca://app/key", "description": "x"},
		RequestState: "request:rq_0000000000000000000000000000ffff:00", InputResponses: sdk.InputResponseMap{inputKey: &sdk.ElicitResult{Action: "accept"}}})
	if err != nil {
		t.Fatal(err)
	}
	if e := toolError(t, forged); e.Code != "bad_request" || !strings.Contains(e.Message, "not one arca gave") {
		t.Errorf("a forged request state: %+v", e)
	}

	full := requestHarness(t, harnessOptions{})
	for i := range maxRequests {
		if e := toolError(t, full.call("arca_request_secret", map[string]any{"ref": "arca://app/key" + strings.Repeat("x", i), "description": "x"})); e.Details["request"] == nil {
			t.Fatalf("request %d: %+v", i, e)
		}
	}
	if e := toolError(t, full.call("arca_request_secret", map[string]any{"ref": "arca://app/one-more", "description": "x"})); e.Code != "denied" || !strings.Contains(e.Message, "20 secret requests") {
		t.Errorf("the 21st: %+v", e)
	}
}

// TestRequestToolListed: arca_request_secret takes ref, env and
// description (ref and description required), never a value, and its
// output is put's result.
func TestRequestToolListed(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	res, err := h.session.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if tool.Name != "arca_request_secret" {
			continue
		}
		var in struct {
			Properties           map[string]any
			Required             []string
			AdditionalProperties bool
		}
		var out struct{ Required []string }
		b, _ := json.Marshal(tool.InputSchema)
		_ = json.Unmarshal(b, &in)
		b, _ = json.Marshal(tool.OutputSchema)
		_ = json.Unmarshal(b, &out)
		if len(in.Properties) != 3 || in.Properties["ref"] == nil || in.Properties["env"] == nil || in.Properties["description"] == nil ||
			strings.Join(in.Required, ",") != "ref,description" || in.AdditionalProperties {
			t.Errorf("input schema: %+v", in)
		}
		if strings.Join(out.Required, ",") != "ref,env,version,created,created_at,updated_at" {
			t.Errorf("output schema requires %v", out.Required)
		}
		return
	}
	t.Fatal("arca_request_secret is not listed")
}
