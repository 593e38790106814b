package approvalpage

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/serve/approvalpage/pagetest"
	"github.com/chromedp/cdproto/storage"
	"github.com/chromedp/chromedp"
)

// The page in headless Chromium: the approval's URL asks for the token
// (the server answered 401, with no data), shows the summary and the
// PDP's reason as text (their markup is not run), and a click on Approve
// with "3 uses" chosen reaches the store as that decision, after which the
// page says approved; a click on Deny denies another. Nothing in the
// console (a CSP refusal shows there), no cookie, and the token in no URL.
func TestPageInBrowser(t *testing.T) {
	f := newFixture(t)
	ctx, consoleErrors := pagetest.Browser(t)
	url := f.srv.URL(idPending)

	sh, err := pagetest.Open(ctx, url, testToken)
	if err != nil {
		t.Fatal(err)
	}
	want := f.store.views[idPending]
	if !sh.AskedToken || sh.Phase != "loaded" || sh.State != "pending" || sh.Summary != want.Summary || sh.Reason != want.Reason || sh.Fingerprint != want.Fingerprint {
		t.Fatalf("the page shows %+v", sh)
	}
	if !strings.Contains(sh.Expires, "(in 1") {
		t.Errorf("expires: %q", sh.Expires)
	}
	if pwned := pagetest.Run(t, ctx, chromedp.Evaluate[bool](`"pwned" in document.body.dataset || document.querySelector("main img, main script") !== null`)); pwned {
		t.Error("the untrusted summary or reason ran as markup")
	}

	if err := pagetest.Approve(t, ctx, url, testToken, "uses:3"); err != nil {
		t.Fatal(err)
	}
	if d := f.took(t); d != (decided{idPending, Decision{Grant: true, Scope: Scope{Uses: 3}}}) {
		t.Errorf("the store took %+v", d)
	}
	if state := pagetest.Run(t, ctx, chromedp.Text(chromedp.ID("state"))); state != "approved" {
		t.Errorf("the page says %q", state)
	}

	if err := pagetest.Deny(t, ctx, f.srv.URL(idOther), testToken); err != nil {
		t.Fatal(err)
	}
	if d := f.took(t); d != (decided{idOther, Decision{}}) {
		t.Errorf("the store took %+v", d)
	}

	if loc := pagetest.Run(t, ctx, chromedp.Location()); loc != f.srv.URL(idOther) {
		t.Errorf("the address bar: %s", loc)
	}
	if c := pagetest.Run(t, ctx, chromedp.Evaluate[string](`document.cookie`)); c != "" {
		t.Errorf("the page has cookies: %q", c)
	}
	if cs, err := chromedp.Call(ctx, storage.GetCookies, storage.GetCookiesParams{}); err != nil || len(cs.Cookies) != 0 {
		t.Errorf("the browser holds cookies: %v %v", cs, err)
	}
	if errs := consoleErrors(); len(errs) > 0 {
		t.Errorf("errors in the browser console (a CSP refusal shows here): %q", errs)
	}
}

// The list of pending approvals in the browser, given a wrong token
// first: the page asks again, and its console shows that one refusal (the
// console is watched); given the token, it lists the pending approvals,
// each a link to its page, their text as text.
func TestListInBrowser(t *testing.T) {
	f := newFixture(t)
	ctx, consoleErrors := pagetest.Browser(t)
	sh, err := pagetest.Open(ctx, f.srv.ListURL(), "approver-token-0123456789abcdeX")
	if err != nil {
		t.Fatal(err)
	}
	if !sh.AskedToken || sh.Phase != "login" || !strings.Contains(sh.Status, "the token was refused") {
		t.Fatalf("a wrong token: the page shows %+v", sh)
	}
	if errs := consoleErrors(); len(errs) != 1 || !strings.Contains(errs[0], "401") {
		t.Errorf("the console shows %q, not the one refusal", errs)
	}
	if sh, err = pagetest.Open(ctx, f.srv.ListURL(), testToken); err != nil || !sh.AskedToken || sh.Phase != "loaded" {
		t.Fatalf("the token: %+v %v", sh, err)
	}
	links := pagetest.Run(t, ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#items li a")].map((a) => a.getAttribute("href") + " " + a.textContent)`))
	want := []string{"/approvals/" + idPending + " " + f.store.views[idPending].Summary, "/approvals/" + idOther + " " + f.store.views[idOther].Summary,
		"/approvals/" + idRefused + " " + f.store.views[idRefused].Summary}
	if !slices.Equal(links, want) {
		t.Errorf("the list: %q", links)
	}
	if pwned := pagetest.Run(t, ctx, chromedp.Evaluate[bool](`"pwned" in document.body.dataset || document.querySelector("main img, main script") !== null`)); pwned {
		t.Error("the untrusted summary or reason ran as markup")
	}

	// The store's refusal is shown as text; the chooser's minutes reach it.
	err = pagetest.Approve(t, ctx, f.srv.URL(idRefused), testToken, "minutes:5")
	if err == nil || !strings.Contains(err.Error(), "the approval <b>expired</b> while you read it") {
		t.Errorf("a refused decision: %v", err)
	}
	if d := f.took(t); d != (decided{idRefused, Decision{Grant: true, Scope: Scope{TTLSeconds: 300}}}) {
		t.Errorf("the store was asked %+v", d)
	}
	if b := pagetest.Run(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("#status b").length`)); b != 0 {
		t.Error("the store's message ran as markup")
	}
	if errs := consoleErrors(); len(errs) != 2 || !strings.Contains(errs[1], "409") {
		t.Errorf("the console shows %q, not the refusal and the conflict", errs)
	}
}

// Each choice of the scope chooser reaches the store as its scope, at its
// bounds; a number out of them is refused by the page and reaches nothing.
func TestScopeChoicesInBrowser(t *testing.T) {
	f := newFixture(t)
	ctx, consoleErrors := pagetest.Browser(t)
	for i, tc := range []struct {
		scope string
		want  Scope
	}{
		{"once", Scope{Uses: 1}},
		{"session", Scope{}},
		{"uses:1", Scope{Uses: 1}},
		{"uses:10000", Scope{Uses: 10000}},
		{"minutes:1", Scope{TTLSeconds: 60}},
		{"minutes:1440", Scope{TTLSeconds: 86400}},
	} {
		id := fmt.Sprintf("ap_%032x", 0x100+i)
		f.store.add(id)
		if err := pagetest.Approve(t, ctx, f.srv.URL(id), testToken, tc.scope); err != nil {
			t.Errorf("%s: %v", tc.scope, err)
			continue
		}
		if d := f.took(t); d != (decided{id, Decision{Grant: true, Scope: tc.want}}) {
			t.Errorf("%s: the store took %+v", tc.scope, d)
		}
	}
	for _, scope := range []string{"uses:0", "uses:10001", "minutes:0", "minutes:1441", "uses:-1"} {
		err := pagetest.Approve(t, ctx, f.srv.URL(idPending), testToken, scope)
		if err == nil || !strings.Contains(err.Error(), "give a whole number from 1 to") {
			t.Errorf("%s: %v", scope, err)
		}
	}
	f.noDecision(t, "a number out of bounds")
	if err := pagetest.Approve(t, ctx, f.srv.URL(idPending), testToken, "always"); err == nil {
		t.Error("pagetest took the scope \"always\"")
	}
	if errs := consoleErrors(); len(errs) > 0 {
		t.Errorf("errors in the browser console: %q", errs)
	}
}
