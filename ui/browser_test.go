package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/serve/approvalpage/pagetest"
	"github.com/chromedp/cdproto/storage"
	"github.com/chromedp/chromedp"
)

// The page in headless Chromium: it takes the token from the fragment of
// the URL arca ui prints, keeps it in the tab's session storage and out of
// the address bar and of every cookie, loads under its CSP with no error
// in the console, shows the records table and the chart, the denial with
// its verdict and the chain's state, the events with their user and host, and never a value, a record's
// versions unfolded included. A screenshot is
// saved: to $ARCA_UI_SCREENSHOT when set (docs/ui.png is made so), else
// beside the test's files.
func TestPageInBrowser(t *testing.T) {
	f := newFixture(t)
	bctx, consoleErrors := pagetest.Browser(t)
	if err := chromedp.Do(bctx, chromedp.Navigate(f.http.URL+"/#token="+testToken), chromedp.WaitVisible(`body[data-ready="true"]`)); err != nil {
		t.Fatalf("the page did not load: %v", err)
	}
	url := pagetest.Run(t, bctx, chromedp.Location())
	rows := pagetest.Run(t, bctx, chromedp.Evaluate[int](`document.querySelectorAll("#records tbody tr").length`))
	rects := pagetest.Run(t, bctx, chromedp.Evaluate[int](`document.querySelectorAll("#chart svg rect").length`))
	chainText := pagetest.Run(t, bctx, chromedp.Text("#chain"))
	deniedText := pagetest.Run(t, bctx, chromedp.Text("#denied"))
	recordsText := pagetest.Run(t, bctx, chromedp.Text("#records"))
	eventsText := pagetest.Run(t, bctx, chromedp.Text("#events"))
	// The screenshot shows a record's versions, unfolded.
	if err := chromedp.Do(bctx, chromedp.Click(`#records button[data-ref="arca://app/db"]`), chromedp.WaitVisible(`#records tr.versions`)); err != nil {
		t.Fatalf("the versions of app/db did not show: %v", err)
	}
	// And its detail: metadata, versions, recent events.
	if err := chromedp.Do(bctx, chromedp.Click(`#records button[data-detail="arca://app/db"]`), chromedp.WaitVisible(`#detail[data-ref="arca://app/db"]`)); err != nil {
		t.Fatalf("the detail of app/db did not show: %v", err)
	}
	html := pagetest.Run(t, bctx, chromedp.OuterHTML("html"))
	shot := pagetest.Run(t, bctx, chromedp.FullScreenshot(100))
	if strings.Contains(url, "token") || url != f.http.URL+"/" {
		t.Errorf("the token stayed in the address bar: %s", url)
	}
	if kept := pagetest.Run(t, bctx, chromedp.Evaluate[string](`sessionStorage.getItem("arca-ui-token")`)); kept != testToken {
		t.Errorf("the tab's session storage holds %q, not the token", kept)
	}
	if c := pagetest.Run(t, bctx, chromedp.Evaluate[string](`document.cookie`)); c != "" {
		t.Errorf("the page has cookies: %q", c)
	}
	if cs, err := chromedp.Call(bctx, storage.GetCookies, storage.GetCookiesParams{}); err != nil || len(cs.Cookies) != 0 {
		t.Errorf("the browser holds cookies: %v %v", cs, err)
	}
	if rows != 3 || !strings.Contains(recordsText, "arca://app/db") || !strings.Contains(recordsText, "arca://billing/card") {
		t.Errorf("records table: %d rows: %q", rows, recordsText)
	}
	if rects < 2 {
		t.Errorf("the chart has %d bars", rects)
	}
	if !strings.Contains(chainText, "The chain holds") {
		t.Errorf("chain: %q", chainText)
	}
	if !strings.Contains(deniedText, "billing/card") || !strings.Contains(deniedText, "payments service only") {
		t.Errorf("denied: %q", deniedText)
	}
	if !strings.Contains(eventsText, "ana") || !strings.Contains(eventsText, "laptop") {
		t.Errorf("the events table shows no user and host: %q", eventsText)
	}
	noCanary(t, "the page as rendered", []byte(html))
	if errs := consoleErrors(); len(errs) > 0 {
		t.Errorf("errors in the browser console (a CSP refusal shows here): %q", errs)
	}
	out := filepath.Join(t.TempDir(), "ui.png")
	if p := os.Getenv("ARCA_UI_SCREENSHOT"); p != "" {
		out = p
	}
	if err := os.WriteFile(out, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", out, len(shot))
}
