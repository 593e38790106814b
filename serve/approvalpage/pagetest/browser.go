// Package pagetest drives arca's local web pages in headless Chromium for
// tests: Browser starts one of a fresh profile, and Open, Approve and Deny
// act on an approval's page (serve/approvalpage) as a human would: they
// answer its request for the approver's token, choose a scope and click;
// Step drives any of the page's views (a secret request's too) a step.
// A test of arca serve drives its real page so.
package pagetest

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Timeout bounds a Browser's life.
const Timeout = 90 * time.Second

// Chromium is the browser the tests drive: $ARCA_CHROMIUM, else Debian's
// chromium on the PATH. Its absence fails tb: a page is tested in a real
// browser or not at all (.ci/run and scripts/test.sh install it).
func Chromium(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv("ARCA_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	tb.Fatal("no chromium to test the page in: install Debian's chromium package (scripts/test.sh does), or set ARCA_CHROMIUM")
	return ""
}

// Browser is BrowserFor(tb, Timeout).
func Browser(tb testing.TB) (context.Context, func() []string) {
	tb.Helper()
	return BrowserFor(tb, Timeout)
}

// BrowserFor is a headless Chromium of a fresh profile, its first tab, for
// tb's life (at most timeout), and a func that returns the errors its
// console showed so far (a CSP refusal, an exception, a console.error, a
// resource that failed to load). A page's own document answered 401 is
// not counted: the approval page answers so, by design, a browser that has
// not sent the token; a 401 to anything else is.
func BrowserFor(tb testing.TB, timeout time.Duration) (context.Context, func() []string) {
	tb.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(Chromium(tb)),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.UserDataDir(tb.TempDir()),
		chromedp.WindowSize(1280, 1000),
	)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	tb.Cleanup(cancel)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	tb.Cleanup(cancelAlloc)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	tb.Cleanup(cancelBrowser)

	var mu sync.Mutex
	var consoleErrors []string
	documents := map[network.RequestID]bool{} // the requests of the tab's documents
	listenErr := chromedp.Listen(bctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			if e.Type == network.ResourceTypeDocument {
				documents[e.RequestID] = true
			}
		case *runtime.EventExceptionThrown:
			consoleErrors = append(consoleErrors, "exception: "+e.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			page401 := e.Entry.Source == log.EntrySourceNetwork && documents[e.Entry.NetworkRequestID] && strings.Contains(e.Entry.Text, "status of 401")
			if e.Entry.Level == log.EntryLevelError && !page401 {
				consoleErrors = append(consoleErrors, e.Entry.Text+" ("+e.Entry.URL+")")
			}
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError {
				consoleErrors = append(consoleErrors, "console.error")
			}
		}
	})
	if listenErr != nil {
		tb.Fatalf("the browser: %v", listenErr)
	}
	if _, err := chromedp.Call(bctx, log.Enable, cdp.Empty{}); err != nil {
		tb.Fatalf("the browser: %v", err)
	}
	if _, err := chromedp.Call(bctx, network.Enable, network.EnableParams{}); err != nil {
		tb.Fatalf("the browser: %v", err)
	}
	return bctx, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(consoleErrors)
	}
}

// Run runs a in the browser of ctx, failing tb on an error.
func Run[T any](tb testing.TB, ctx context.Context, a chromedp.Action[T]) T {
	tb.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		tb.Fatalf("the browser: %v", err)
	}
	return v
}
