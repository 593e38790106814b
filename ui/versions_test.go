package ui

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/access"
	"github.com/arca-secrets/arca/ops/opstest"
	"github.com/arca-secrets/arca/serve/approvalpage/pagetest"
	"github.com/arca-secrets/arca/vault"
	"github.com/chromedp/chromedp"
)

func historyPath(ref string) string { return "/api/history?env=default&ref=" + url.QueryEscape(ref) }

// A record's versions, newest first, each with its state and when it was
// written; a removed name's too, with when it was deleted; the deleted
// names apart. Each read is audited; none holds a value.
func TestHistoryEndpoints(t *testing.T) {
	f := newFixture(t)
	var h History
	get(t, f, historyPath("arca://app/db"), &h)
	if h.Ref != "arca://app/db" || h.Env != "default" || h.Current == nil || *h.Current != 2 || h.DeletedAt != "" || len(h.Versions) != 2 ||
		h.Versions[0] != (Version{2, "current", h.Versions[0].WrittenAt}) || h.Versions[1] != (Version{1, "previous", h.Versions[1].WrittenAt}) ||
		h.Versions[0].WrittenAt == "" || h.Versions[1].WrittenAt > h.Versions[0].WrittenAt {
		t.Fatalf("history of app/db: %+v", h)
	}
	get(t, f, historyPath("arca://app/old"), &h)
	if h.Current != nil || h.DeletedAt == "" || len(h.Versions) != 2 || h.Versions[0].State != "deleted" || h.Versions[0].Version != 2 || h.Versions[1].State != "previous" {
		t.Fatalf("history of the removed app/old: %+v", h)
	}
	var d struct {
		Total   int       `json:"total"`
		Deleted []Deleted `json:"deleted"`
	}
	get(t, f, "/api/deleted?env=default", &d)
	if d.Total != 1 || len(d.Deleted) != 1 || d.Deleted[0].Ref != "arca://app/old" || d.Deleted[0].Version != 2 || d.Deleted[0].DeletedAt != h.DeletedAt {
		t.Fatalf("deleted: %+v", d)
	}
	var recs struct{ Records []record }
	get(t, f, "/api/records?env=default", &recs)
	for _, r := range recs.Records {
		if r.Ref == "arca://app/old" {
			t.Fatalf("a removed name is among the records: %+v", recs.Records)
		}
	}
	get(t, f, "/api/deleted?env=default&offset=1", &d)
	if d.Total != 1 || len(d.Deleted) != 0 {
		t.Fatalf("deleted from past the end: %+v", d)
	}
	for path, status := range map[string]int{
		historyPath("arca://app/never"):           http.StatusNotFound,
		"/api/history?env=default":                http.StatusBadRequest,
		historyPath("app/db"):                     http.StatusBadRequest,
		"/api/history?env=nope&ref=arca://app/db": http.StatusBadRequest,
		"/api/deleted?env=default&limit=0":        http.StatusBadRequest,
	} {
		resp, body := request(t, f, "GET", path, bearer(testToken))
		if resp.StatusCode != status {
			t.Errorf("%s: %d %s, want %d", path, resp.StatusCode, body, status)
		}
		noCanary(t, path, body)
	}
	trail := readFile(t, f.auditFile)
	for _, want := range []string{`"event":"history","op":"history","outcome":"ok","env":"default","ref":"app/db","version":2`,
		`"outcome":"not_found","env":"default","ref":"app/never"`, `"op":"history","outcome":"bad_request","ref":"app/db","code":"bad_request","message":"unknown env`} {
		if !strings.Contains(trail, want) {
			t.Errorf("the trail lacks %s:\n%s", want, trail)
		}
	}
	// The deleted names are ops' list (with deleted) events, the page's (source ui), as arca list
	// --deleted writes them: two here (the limit=0 request is refused
	// before it lists), and the records' one.
	if n := strings.Count(trail, `"event":"list","op":"list","outcome":"ok","env":"default","user":"ana","host":"laptop","source":"ui"`); n != 3 {
		t.Errorf("%d list events, want 3:\n%s", n, trail)
	}
	noCanary(t, "the audit file", []byte(trail))
}

// Guardrails hold for the page's history as for the CLI's, ops' own: a
// name's versions are refused where a get of it is (a rule on get covers
// its history), the deleted names where list is; each refusal is ops'
// denied event.
func TestHistoryGuardrails(t *testing.T) {
	events := &strings.Builder{}
	fx := opstest.New(t, opstest.Options{Audit: events, Config: `
[[guardrails.rule]]
env = "default"
ref = "billing/*"
ops = ["get"]
reason = "billing is the auditors'"
[[guardrails.rule]]
env = "locked"
ops = ["list"]
reason = "no listing here"
[envs.default]
vault = "default"
[envs.locked]
vault = "locked"
[vaults.default]
kind = "file"
[vaults.locked]
kind = "file"
`})
	ctx := context.Background()
	if _, err := fx.Service.Put(ctx, ops.Request{Ref: "arca://billing/card", Value: vault.NewSecret([]byte(canary))}); err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Token: testToken, Vaults: access.Service{Service: fx.Service}, Envs: []string{"default", "locked"}})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{svc: fx.Service, server: s, http: httptest.NewServer(s)}
	t.Cleanup(f.http.Close)
	for path, want := range map[string]struct {
		status int
		body   string
	}{
		historyPath("arca://billing/card"):         {http.StatusForbidden, "auditors"},
		historyPath("arca://app/x"):                {http.StatusNotFound, "not found"},
		"/api/deleted?env=locked":                  {http.StatusForbidden, "no listing here"},
		"/api/deleted?env=default":                 {http.StatusOK, `"deleted":[]`},
		"/api/history?env=locked&ref=arca://app/x": {http.StatusNotFound, "not found"},
	} {
		resp, body := request(t, f, "GET", path, bearer(testToken))
		if resp.StatusCode != want.status || !strings.Contains(string(body), want.body) {
			t.Errorf("%s: %d %s, want %d and %q", path, resp.StatusCode, body, want.status, want.body)
		}
		noCanary(t, path, body)
	}
	for _, want := range []string{`"event":"denied","op":"history","outcome":"denied","env":"default","ref":"billing/card"`,
		`"event":"denied","op":"list","outcome":"denied","env":"locked"`} {
		if !strings.Contains(events.String(), want) {
			t.Errorf("the trail lacks %s:\n%s", want, events)
		}
	}
	if _, err := New(Options{Token: testToken}); err == nil {
		t.Error("New took Options without Vaults")
	}
}

// The page in headless Chromium shows a record's versions under its row
// (number, state, when written) at a click, and hides them at another; the
// removed name only in the deleted section, with when it was deleted and
// its versions. No version's value reaches the page: every value of the
// fixture holds the canary (TestNoCanaryCatchesALeak is the check's
// positive control, TestCanaryIsInTheVersions that the values are there).
func TestVersionsInBrowser(t *testing.T) {
	f := newFixture(t)
	bctx, consoleErrors := pagetest.Browser(t)
	if err := chromedp.Do(bctx, chromedp.Navigate(f.http.URL+"/#token="+testToken), chromedp.WaitVisible(`body[data-ready="true"]`)); err != nil {
		t.Fatalf("the page did not load: %v", err)
	}
	recordsText := pagetest.Run(t, bctx, chromedp.Text("#records"))
	deletedText := pagetest.Run(t, bctx, chromedp.Text("#deleted"))
	deletedCount := pagetest.Run(t, bctx, chromedp.Text("#deleted-count"))
	if strings.Contains(recordsText, "app/old") || !strings.Contains(deletedText, "arca://app/old") || deletedCount != "(1)" {
		t.Fatalf("records %q, deleted %q %q: the removed name belongs in the deleted section alone", recordsText, deletedCount, deletedText)
	}
	dbButton := `#records button[data-ref="arca://app/db"]`
	dbVersions := `#records tr.versions[data-ref="arca://app/db"]`
	if err := chromedp.Do(bctx, chromedp.Click(dbButton), chromedp.WaitVisible(dbVersions)); err != nil {
		t.Fatalf("the versions of app/db did not show: %v", err)
	}
	versions := pagetest.Run(t, bctx, chromedp.Evaluate[[][]string](`Array.from(document.querySelectorAll('#records tr.versions[data-ref="arca://app/db"] tbody tr')).map((tr) => Array.from(tr.cells).map((c) => c.textContent))`))
	if len(versions) != 2 || versions[0][0] != "2" || versions[0][1] != "current" || versions[1][0] != "1" || versions[1][1] != "previous" || !strings.HasPrefix(versions[1][2], "20") {
		t.Fatalf("versions of app/db as shown: %q", versions)
	}
	oldButton := `#deleted button[data-ref="arca://app/old"]`
	oldVersions := `#deleted tr.versions[data-ref="arca://app/old"]`
	if err := chromedp.Do(bctx, chromedp.Click(oldButton), chromedp.WaitVisible(oldVersions)); err != nil {
		t.Fatalf("the versions of app/old did not show: %v", err)
	}
	oldText := pagetest.Run(t, bctx, chromedp.Text(oldVersions))
	if !strings.Contains(oldText, "deleted") || !strings.Contains(oldText, "previous") {
		t.Fatalf("versions of app/old as shown: %q", oldText)
	}
	html := pagetest.Run(t, bctx, chromedp.OuterHTML("html"))
	noCanary(t, "the page with every version shown", []byte(html))
	if err := chromedp.Do(bctx, chromedp.Click(dbButton), chromedp.WaitNotPresent(dbVersions)); err != nil {
		t.Fatalf("the versions of app/db did not hide again: %v", err)
	}
	if errs := consoleErrors(); len(errs) > 0 {
		t.Errorf("errors in the browser console: %q", errs)
	}
}

// The positive control of the tests above: every version the page lists
// holds the canary in the vault, read back through the one path that
// reveals values.
func TestCanaryIsInTheVersions(t *testing.T) {
	f := newFixture(t)
	st, err := f.svc.Store("default")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"app/db", "app/old"} {
		c, err := st.Chain(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		if c.HasCurrent && strings.Contains(string(c.Current.Value.Reveal()), canary) {
			n++
		}
		for _, r := range c.Previous {
			if strings.Contains(string(r.Value.Reveal()), canary) {
				n++
			}
		}
		if n != 2 {
			t.Errorf("%s: %d of its kept versions hold the canary, want 2", name, n)
		}
	}
}
