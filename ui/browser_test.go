package ui

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/storage"
	"github.com/chromedp/chromedp"
)

// chromium is the browser the test drives: $ARCA_CHROMIUM, else Debian's
// chromium on the PATH. Its absence fails the test: the page is tested in a
// real browser or not at all (.ci/run and scripts/test.sh install it).
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("ARCA_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no chromium to test the page in: install Debian's chromium package (scripts/test.sh does), or set ARCA_CHROMIUM")
	return ""
}

// browser is a headless Chromium of a fresh profile, its first tab, for
// the test's life (at most timeout), and a func that returns the errors
// its console showed so far.
func browser(t *testing.T, timeout time.Duration) (context.Context, func() []string) {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 1000),
	)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(cancelBrowser)

	var mu sync.Mutex
	var consoleErrors []string
	listenErr := chromedp.Listen(bctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			consoleErrors = append(consoleErrors, "exception: "+e.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError {
				consoleErrors = append(consoleErrors, e.Entry.Text)
			}
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError {
				consoleErrors = append(consoleErrors, "console.error")
			}
		}
	})
	if listenErr != nil {
		t.Fatalf("the browser: %v", listenErr)
	}
	if _, err := chromedp.Call(bctx, log.Enable, cdp.Empty{}); err != nil {
		t.Fatalf("the browser: %v", err)
	}
	return bctx, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(consoleErrors)
	}
}

// The page in headless Chromium: it takes the token from the fragment of
// the URL arca ui prints, keeps it in the tab's session storage and out of
// the address bar and of every cookie, loads under its CSP with no error
// in the console, shows the records table and the chart, the denial with
// its verdict and the chain's state, and never a value. A screenshot is
// saved: to $ARCA_UI_SCREENSHOT when set (docs/ui.png is made so), else
// beside the test's files.
func TestPageInBrowser(t *testing.T) {
	f := newFixture(t)
	bctx, consoleErrors := browser(t, 90*time.Second)
	if err := chromedp.Do(bctx, chromedp.Navigate(f.http.URL+"/#token="+testToken), chromedp.WaitVisible(`body[data-loaded="true"]`)); err != nil {
		t.Fatalf("the page did not load: %v", err)
	}
	url := run(t, bctx, chromedp.Location())
	rows := run(t, bctx, chromedp.Evaluate[int](`document.querySelectorAll("#records tbody tr").length`))
	rects := run(t, bctx, chromedp.Evaluate[int](`document.querySelectorAll("#chart svg rect").length`))
	chainText := run(t, bctx, chromedp.Text("#chain"))
	deniedText := run(t, bctx, chromedp.Text("#denied"))
	recordsText := run(t, bctx, chromedp.Text("#records"))
	html := run(t, bctx, chromedp.OuterHTML("html"))
	shot := run(t, bctx, chromedp.FullScreenshot(100))
	if strings.Contains(url, "token") || url != f.http.URL+"/" {
		t.Errorf("the token stayed in the address bar: %s", url)
	}
	if kept := run(t, bctx, chromedp.Evaluate[string](`sessionStorage.getItem("arca-ui-token")`)); kept != testToken {
		t.Errorf("the tab's session storage holds %q, not the token", kept)
	}
	if c := run(t, bctx, chromedp.Evaluate[string](`document.cookie`)); c != "" {
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

// run runs a in the browser, failing the test on an error.
func run[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("the browser: %v", err)
	}
	return v
}
