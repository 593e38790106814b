package mcp

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/pdp"
	"github.com/arca-secrets/arca/serve/approvalpage/pagetest"
	"github.com/chromedp/chromedp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The request's page in headless Chromium, as the human the client sends
// there: it asks for the approver's token, shows the ref, the env, who
// asks and the description as text (its markup is not run), takes the
// value in a password field; the PDP's refusal of the first value is
// shown, the field emptied, and the second value is stored: the page says
// the version, the tool call answers it, and the page never shows the
// value. Nothing in the console but the refusal's 409.
func TestRequestPageInBrowser(t *testing.T) {
	ctx, consoleErrors := pagetest.Browser(t)
	var denyPut atomic.Bool
	denyPut.Store(true)
	const description = `the deploy key <img src=x onerror="document.body.dataset.pwned=1">`
	h := requestHarness(t, harnessOptions{actor: "agent-7", client: "probe-client",
		decide: func(r pdp.Request) pdp.Verdict {
			if r.Op == "put" && denyPut.Load() {
				return pdp.Verdict{Reason: "not <b>yet</b>"}
			}
			return pdp.Verdict{Allow: true}
		},
		options: urlClient(func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			typeInBrowser(t, ctx, req.Params.URL, &denyPut)
			return &sdk.ElicitResult{Action: "accept"}, nil
		})})
	res := h.call("arca_request_secret", map[string]any{"ref": "arca://ci/deploy-key", "description": description})
	var out ops.PutResult
	structured(t, res, &out)
	if res.IsError || out.Ref != "arca://ci/deploy-key" || out.Version != 1 {
		t.Fatalf("result = %+v", res.StructuredContent)
	}
	got, err := h.svc.Get(context.Background(), ops.Request{Ref: "arca://ci/deploy-key"})
	if err != nil || string(got.Value.Reveal()) != requestCanary {
		t.Fatalf("the vault holds another value (err %v)", err)
	}
	if strings.Contains(string(h.transcript.Bytes()), requestCanary) {
		t.Error("the value reached an MCP message")
	}
	if errs := consoleErrors(); len(errs) != 1 || !strings.Contains(errs[0], "409") {
		t.Errorf("the console shows %q, not the one refusal", errs)
	}
}

// typeInBrowser acts on the request's page at url in the browser of ctx: the
// token, a value the PDP refuses (deny is then cleared), the value again.
func typeInBrowser(t *testing.T, ctx context.Context, url string, deny *atomic.Bool) {
	t.Helper()
	text := func(id string) string {
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("`+id+`").textContent`))
		if err != nil {
			t.Errorf("reading #%s: %v", id, err)
		}
		return v
	}
	step := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		if err := pagetest.Step(ctx, actions...); err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	step("opening the page", chromedp.Navigate(url))
	if phase := evaluate(t, ctx, `document.body.dataset.phase`); phase != "login" {
		t.Errorf("the page did not ask for the token: %q", phase)
	}
	step("giving the token", chromedp.SendKeys(chromedp.ID("token"), approverToken), chromedp.Click(chromedp.ID("login-button")))
	if ref, env, asker := text("ref"), text("env"), text("asker"); ref != "arca://ci/deploy-key" || env != "default" || !strings.Contains(asker, "agent-7") || !strings.Contains(asker, "probe-client") {
		t.Errorf("the page shows %q in %q, asked by %q", ref, env, asker)
	}
	if d := text("description"); !strings.HasPrefix(d, "the deploy key <img") {
		t.Errorf("the description shows as %q", d)
	}
	if typ := evaluate(t, ctx, `document.getElementById("value").type + " " + document.getElementById("value").autocomplete`); typ != "password off" {
		t.Errorf("the value's field is %q", typ)
	}
	step("storing a refused value", chromedp.SendKeys(chromedp.ID("value"), requestCanary), chromedp.Click(chromedp.ID("store")))
	if phase, status := evaluate(t, ctx, `document.body.dataset.phase`), text("status"); phase != "failed" || !strings.Contains(status, "not <b>yet</b>") {
		t.Errorf("after a refusal the page is %q: %q", phase, status)
	}
	deny.Store(false)
	step("storing the value", chromedp.SendKeys(chromedp.ID("value"), requestCanary), chromedp.Click(chromedp.ID("store")))
	if phase, version, state := evaluate(t, ctx, `document.body.dataset.phase`), text("version"), text("state"); phase != "stored" || version != "1" || state != "stored" {
		t.Errorf("after storing the page is %q, version %q, state %q: %q", phase, version, state, text("status"))
	}
	if shown := evaluate(t, ctx, `document.documentElement.outerHTML + document.getElementById("value").value + document.body.innerText`); strings.Contains(shown, requestCanary) {
		t.Error("the page shows the value after it was sent")
	}
	if pwned := evaluate(t, ctx, `String("pwned" in document.body.dataset || document.querySelector("main img, main script") !== null)`); pwned != "false" {
		t.Error("the untrusted description ran as markup")
	}
}

// evaluate is expr's value in the browser of ctx, a string.
func evaluate(t *testing.T, ctx context.Context, expr string) string {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		t.Errorf("%s: %v", expr, err)
	}
	return v
}
