package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/opstest"
	"github.com/arca-secrets/arca/pdp"
	"github.com/arca-secrets/arca/serve/approvalpage"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The approval page's config and its approver's token, in the process's
// environment as arca mcp would find it.
const (
	pageConfig    = "[serve.approvals]\nlisten = \"127.0.0.1:0\"\napprover = \"human:ana\"\n"
	approverToken = "approver-token-0123456789abcdef"
)

// bothProtocols are the protocol versions whose ways of asking differ:
// the SDK asks the client itself, or the client retries.
func bothProtocols() []string { return []string{"2025-11-25", "2026-07-28"} }

// needsHuman is the policy of an approval: every request is denied with
// arca:approval unless it carries an approved approval.
func needsHuman(req pdp.Request) pdp.Verdict {
	if req.Approval != nil && req.Approval.State == ops.ApprovalApproved {
		return pdp.Verdict{Allow: true, Reason: "a human approved"}
	}
	return pdp.Verdict{Reason: "a human must look", Obligations: []string{manifest.ObligationApproval}}
}

// pageHarness is a harness of the needsHuman policy with the approval
// page running (page false: none), its client given opts.
func pageHarness(t *testing.T, page bool, protocol string, opts *sdk.ClientOptions, now func() time.Time) *harness {
	t.Helper()
	o := harnessOptions{decide: needsHuman, actor: "agent-7", protocol: protocol, options: opts, now: now,
		environ: []string{"ARCA_APPROVER_TOKEN=" + approverToken}}
	if page {
		o.config = pageConfig
	}
	return newHarness(t, o)
}

// urlCaps are the capabilities of a client that can send its user to a
// URL, and to no form.
func urlCaps() *sdk.ClientCapabilities {
	return &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{URL: &sdk.URLElicitationCapabilities{}}}
}

// humanReads reads the page at pageURL as the human does, with the
// token: the approval it shows and the CSRF token a decision needs.
func humanReads(pageURL string) (state, csrf string, err error) {
	hr, err := http.NewRequest("GET", pageURL, nil)
	if err != nil {
		return "", "", err
	}
	hr.Header.Set("Authorization", "Bearer "+approverToken)
	var got struct {
		Approval struct{ State string }
		CSRF     string `json:"csrf"`
	}
	if err := send(hr, &got); err != nil {
		return "", "", err
	}
	return got.Approval.State, got.CSRF, nil
}

// humanDecides decides the approval at pageURL on its page as the human
// does: the token, the page's own Origin and the CSRF token its data came
// with. decision is "grant" (one use) or "deny".
func humanDecides(pageURL, decision string) error {
	state, csrf, err := humanReads(pageURL)
	if err != nil {
		return err
	}
	if state != ops.ApprovalPending {
		return errors.New("the page shows the approval " + state)
	}
	body := `{"decision":"deny"}`
	if decision == "grant" {
		body = `{"decision":"grant","scope":{"uses":1}}`
	}
	hr, err := http.NewRequest("POST", pageURL, strings.NewReader(body))
	if err != nil {
		return err
	}
	u, err := url.Parse(pageURL)
	if err != nil {
		return err
	}
	hr.Header.Set("Authorization", "Bearer "+approverToken)
	hr.Header.Set("Origin", u.Scheme+"://"+u.Host)
	hr.Header.Set(approvalpage.CSRFHeader, csrf)
	hr.Header.Set("Content-Type", "application/json")
	return send(hr, nil)
}

// send sends hr and decodes a 200's JSON answer into v (when set).
func send(hr *http.Request, v any) error {
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return errors.New(hr.Method + " " + hr.URL.String() + ": " + resp.Status + ": " + string(b))
	}
	if v == nil {
		return nil
	}
	return json.Unmarshal(b, v)
}

// elicited keeps what a client was asked, and the elicitations it was
// told are complete.
type elicited struct {
	mu        sync.Mutex
	asked     []*sdk.ElicitParams
	completed chan string
}

func newElicited() *elicited { return &elicited{completed: make(chan string, 4)} }

func (e *elicited) note(p *sdk.ElicitParams) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.asked = append(e.asked, p)
}

func (e *elicited) all() []*sdk.ElicitParams {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]*sdk.ElicitParams(nil), e.asked...)
}

// options are a URL-capable client's, answering each elicitation with
// answer(params).
func (e *elicited) options(answer func(*sdk.ElicitParams) (*sdk.ElicitResult, error)) *sdk.ClientOptions {
	return &sdk.ClientOptions{
		Capabilities: urlCaps(),
		ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			e.note(req.Params)
			return answer(req.Params)
		},
		ElicitationCompleteHandler: func(_ context.Context, req *sdk.ElicitationCompleteNotificationRequest) {
			e.completed <- req.Params.ElicitationID
		},
	}
}

// pageURLOf matches an approval's page on the loopback page.
var pageURLOf = regexp.MustCompile(`^http://127\.0\.0\.1:[0-9]+/approvals/(ap_[0-9a-f]{32})$`)

// TestApprovalOnThePage: with either protocol, a call the policy sends
// to a human asks the client, in URL mode, to send its user to the
// approval's page; the human grants it there; the call then goes on and
// succeeds, its event carrying the approval, after approval.request and
// approval.decide (via the page); the client is told the elicitation is
// complete.
func TestApprovalOnThePage(t *testing.T) {
	for _, proto := range bothProtocols() {
		t.Run(proto, func(t *testing.T) {
			e := newElicited()
			h := pageHarness(t, true, proto, e.options(func(p *sdk.ElicitParams) (*sdk.ElicitResult, error) {
				if err := humanDecides(p.URL, "grant"); err != nil {
					t.Errorf("deciding on the page: %v", err)
					return nil, err
				}
				return &sdk.ElicitResult{Action: "accept"}, nil
			}), nil)
			res := h.call("arca_list", map[string]any{})
			if res.IsError {
				t.Fatalf("arca_list failed: %+v", res.StructuredContent)
			}
			asked := e.all()
			if len(asked) != 1 || asked[0].Mode != "url" || asked[0].RequestedSchema != nil {
				t.Fatalf("the client was asked %+v", asked)
			}
			m := pageURLOf.FindStringSubmatch(asked[0].URL)
			if m == nil || asked[0].ElicitationID != m[1] || !strings.Contains(asked[0].Message, `"agent-7" asks to list`) {
				t.Fatalf("the client was asked %+v", asked[0])
			}
			id := m[1]
			if strings.Contains(string(h.transcript.Bytes()), `"requestedSchema"`) {
				t.Fatalf("a form was asked for:\n%s", h.transcript.Bytes())
			}
			want := []string{"approval.request", "approval.decide", "list"}
			var got []string
			for _, ev := range opstest.Events(t, h.events.Bytes()) {
				switch {
				case ev.Event == "approval.request" && ev.Approval.ID == id,
					ev.Event == "approval.decide" && ev.Approval.ID == id && ev.Approval.Via == ops.ViaPage && ev.Approval.Decision == "grant",
					ev.Event == "list" && ev.Outcome == audit.OK && ev.Approval != nil && ev.Approval.ID == id:
					got = append(got, ev.Event)
				}
			}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Fatalf("events %v, want %v:\n%s", got, want, h.events.Bytes())
			}
			select {
			case done := <-e.completed:
				if done != id {
					t.Fatalf("elicitation %s complete, want %s", done, id)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the client was not told the elicitation is complete")
			}
		})
	}
}

// TestApprovalDeclined: a user who declines to open the page gets a tool
// error, denied with cause approval_declined, naming the approval and its
// page; the approval stays pending, and nothing runs.
func TestApprovalDeclined(t *testing.T) {
	for _, proto := range bothProtocols() {
		t.Run(proto, func(t *testing.T) {
			e := newElicited()
			h := pageHarness(t, true, proto, e.options(func(*sdk.ElicitParams) (*sdk.ElicitResult, error) {
				return &sdk.ElicitResult{Action: "decline"}, nil
			}), nil)
			werr := toolError(t, h.call("arca_list", map[string]any{}))
			ap, _ := werr.Details["approval"].(map[string]any)
			id, _ := ap["id"].(string)
			if werr.Code != manifest.Denied || werr.Details["cause"] != causeDeclined || id == "" || !pageURLOf.MatchString(ap["url"].(string)) {
				t.Fatalf("error = %+v", werr)
			}
			if v, _ := h.svc.Approval(id); v.State != ops.ApprovalPending {
				t.Fatalf("the approval is %s", v.State)
			}
			if n := len(h.decider.requests()); n != 1 {
				t.Fatalf("the PDP was asked %d times, want 1", n)
			}
		})
	}
}

// TestApprovalWithoutURLElicitation: a client that cannot send its user
// to a URL is answered approval_required with details.approval and its
// page; once a human grants it there, the call again with the approval
// argument succeeds.
func TestApprovalWithoutURLElicitation(t *testing.T) {
	for _, proto := range bothProtocols() {
		t.Run(proto, func(t *testing.T) {
			h := pageHarness(t, true, proto, nil, nil)
			werr := toolError(t, h.call("arca_list", map[string]any{}))
			ap, _ := werr.Details["approval"].(map[string]any)
			pageURL, _ := ap["url"].(string)
			m := pageURLOf.FindStringSubmatch(pageURL)
			if werr.Code != manifest.ApprovalRequired || m == nil || ap["id"] != m[1] || ap["fingerprint"] == "" || ap["expires_at"] == "" {
				t.Fatalf("error = %+v", werr)
			}
			if err := humanDecides(pageURL, "grant"); err != nil {
				t.Fatal(err)
			}
			if res := h.call("arca_list", map[string]any{"approval": m[1]}); res.IsError {
				t.Fatalf("the retry failed: %+v", res.StructuredContent)
			}
		})
	}
}

// TestApprovalWithoutPage: with no page, even a client that could send
// its user to a URL is answered approval_required with details.approval
// and no url, and is asked nothing.
func TestApprovalWithoutPage(t *testing.T) {
	e := newElicited()
	h := pageHarness(t, false, "", e.options(func(*sdk.ElicitParams) (*sdk.ElicitResult, error) {
		return &sdk.ElicitResult{Action: "accept"}, nil
	}), nil)
	werr := toolError(t, h.call("arca_list", map[string]any{}))
	ap, _ := werr.Details["approval"].(map[string]any)
	if _, hasURL := ap["url"]; werr.Code != manifest.ApprovalRequired || ap["id"] == nil || hasURL {
		t.Fatalf("error = %+v", werr)
	}
	if asked := e.all(); len(asked) != 0 {
		t.Fatalf("the client was asked %+v", asked)
	}
}

// TestApprovalForgedState: a retry whose request state arca did not
// sign (altered, or made up), or that lacks the user's answer, is
// bad_request, and runs nothing.
func TestApprovalForgedState(t *testing.T) {
	h := pageHarness(t, true, "2026-07-28", &sdk.ClientOptions{Capabilities: urlCaps(), MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true}}, nil)
	first := h.call("arca_list", map[string]any{})
	state := first.RequestState
	kind, rest, _ := strings.Cut(state, ":")
	id, mac, _ := strings.Cut(rest, ":")
	if first.InputRequests == nil || kind != approvalKind || !strings.HasPrefix(id, "ap_") {
		t.Fatalf("the first call was answered %+v", first)
	}
	other := "ap_" + strings.Repeat("0", 32)
	accept := sdk.InputResponseMap{inputKey: &sdk.ElicitResult{Action: "accept"}}
	for _, tc := range []struct {
		state   string
		answers sdk.InputResponseMap
	}{
		{approvalKind + ":" + other + ":" + mac, accept},
		{"request:" + id + ":" + mac, accept},
		{approvalKind + ":" + id + ":" + strings.Repeat("0", len(mac)), accept},
		{approvalKind + ":" + id, accept},
		{state, nil},
		{state, sdk.InputResponseMap{"other": &sdk.ElicitResult{Action: "accept"}}},
	} {
		res, err := h.session.CallTool(context.Background(), &sdk.CallToolParams{Name: "arca_list", Arguments: map[string]any{}, RequestState: tc.state, InputResponses: tc.answers})
		if err != nil {
			t.Fatal(err)
		}
		if werr := toolError(t, res); werr.Code != manifest.BadRequest {
			t.Fatalf("state %q: error = %+v", tc.state, werr)
		}
	}
	if n := len(h.decider.requests()); n != 1 {
		t.Fatalf("the PDP was asked %d times, want 1", n)
	}
}

// TestApprovalExpiresWhileWaiting: a call whose user went to the page
// waits; the approval expires undecided (the human looks at the page
// after its time); the call is then denied, approval_expired.
func TestApprovalExpiresWhileWaiting(t *testing.T) {
	for _, proto := range bothProtocols() {
		t.Run(proto, func(t *testing.T) {
			var clock atomic.Int64
			clock.Store(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano())
			e := newElicited()
			went := make(chan string, 1)
			h := pageHarness(t, true, proto, e.options(func(p *sdk.ElicitParams) (*sdk.ElicitResult, error) {
				went <- p.URL
				return &sdk.ElicitResult{Action: "accept"}, nil
			}), func() time.Time { return time.Unix(0, clock.Load()).UTC() })
			got := h.callAsync("arca_list", map[string]any{})
			pageURL := <-went
			clock.Add(int64(manifest.ApprovalWait))
			if state, _, err := humanReads(pageURL); err != nil || state != ops.ApprovalExpired {
				t.Fatalf("the page shows %q: %v", state, err)
			}
			r := <-got
			if r.err != nil {
				t.Fatal(r.err)
			}
			if werr := toolError(t, r.res); werr.Code != manifest.Denied || werr.Details["cause"] != "approval_expired" {
				t.Fatalf("error = %+v", werr)
			}
		})
	}
}

// TestApprovalWaitEndsWithInput: a call waiting for a human does not
// hold the session past the client's input: once the input ends, the
// call is answered approval_required (still pending) and Serve returns.
func TestApprovalWaitEndsWithInput(t *testing.T) {
	for _, proto := range bothProtocols() {
		t.Run(proto, func(t *testing.T) {
			retried := make(chan struct{})
			var once sync.Once
			e := newElicited()
			o := harnessOptions{decide: needsHuman, protocol: proto, config: pageConfig,
				environ: []string{"ARCA_APPROVER_TOKEN=" + approverToken},
				options: e.options(func(*sdk.ElicitParams) (*sdk.ElicitResult, error) {
					return &sdk.ElicitResult{Action: "accept"}, nil
				}),
				sent: func(msg []byte) { // the retry (2026-07-28), or the user's answer the SDK retries with
					if strings.Contains(string(msg), `"requestState"`) || strings.Contains(string(msg), `"action":"accept"`) {
						once.Do(func() { close(retried) })
					}
				}}
			h := newHarness(t, o)
			got := h.callAsync("arca_list", map[string]any{})
			<-retried
			h.input.Close()
			select {
			case err := <-h.done:
				h.done <- err // for the cleanup
				if err != nil {
					t.Fatalf("Serve: %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("Serve did not return once the input ended")
			}
			r := <-got
			if r.err != nil {
				t.Fatal(r.err)
			}
			if werr := toolError(t, r.res); werr.Code != manifest.ApprovalRequired || werr.Details["approval"] == nil {
				t.Fatalf("error = %+v", werr)
			}
		})
	}
}

// called is a call's outcome.
type called struct {
	res *sdk.CallToolResult
	err error
}

// callAsync calls tool name with args on its own goroutine; its outcome
// comes on the channel.
func (h *harness) callAsync(name string, args any) <-chan called {
	ch := make(chan called, 1)
	go func() {
		res, err := h.session.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
		ch <- called{res, err}
	}()
	return ch
}
