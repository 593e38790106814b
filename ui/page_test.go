package ui

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/access"
	"github.com/arca-secrets/arca/serve/approvalpage/pagetest"
	"github.com/arca-secrets/arca/vault"
	"github.com/chromedp/chromedp"
)

// openReady opens the page of f with its token and waits for data-ready.
func openReady(t *testing.T, ctx context.Context, base string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/#token="+testToken), chromedp.WaitVisible(`body[data-ready="true"]`)); err != nil {
		t.Fatalf("the page did not get ready: %v", err)
	}
}

// waitJS waits until js, an expression, is true in the page.
func waitJS(t *testing.T, ctx context.Context, js string) {
	t.Helper()
	pagetest.Run(t, ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(20*time.Second)))
}

// text is the text of the element sel.
func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	return pagetest.Run(t, ctx, chromedp.Text(sel))
}

// The records, paged and searched on the server: 123 of them in pages of
// 50, next and previous, a search by substring and by glob over every
// record; a record's detail shows its metadata, its versions and its
// latest events, the page's own reads among them marked as the page's.
func TestRecordsPagedInBrowser(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for i := range 120 {
		if _, err := f.svc.Put(ctx, ops.Request{Ref: fmt.Sprintf("arca://bulk/key-%03d", i), Value: vault.NewSecret([]byte(canary))}); err != nil {
			t.Fatal(err)
		}
	}
	bctx, consoleErrors := pagetest.Browser(t)
	openReady(t, bctx, f.http.URL)
	rowCount := func() int {
		return pagetest.Run(t, bctx, chromedp.Evaluate[int](`document.querySelectorAll("#records tbody tr").length`))
	}
	if n, r := rowCount(), text(t, bctx, "#r-range"); n != 50 || r != "1–50 of 123" {
		t.Fatalf("the first page: %d rows, %q", n, r)
	}
	waitRange := func(want string) {
		t.Helper()
		waitJS(t, bctx, fmt.Sprintf(`document.getElementById("r-range").textContent === %q`, want))
	}
	for _, step := range []struct{ click, want string }{{"#r-next", "51–100 of 123"}, {"#r-next", "101–123 of 123"}, {"#r-prev", "51–100 of 123"}} {
		if err := chromedp.Do(bctx, chromedp.Click(step.click)); err != nil {
			t.Fatal(err)
		}
		waitRange(step.want)
	}
	if n := rowCount(); n != 50 {
		t.Fatalf("the second page: %d rows", n)
	}
	if disabled := pagetest.Run(t, bctx, chromedp.Evaluate[bool](`document.getElementById("r-next").disabled`)); disabled {
		t.Fatal("next is disabled on the second of three pages")
	}
	for q, want := range map[string]string{"key-11": "1–10 of 10", "bulk/*-0?5": "1–10 of 10", "app/": "1–2 of 2", "nothing-such": "none"} {
		if err := chromedp.Do(bctx, chromedp.SetValue("#r-q", q), chromedp.Click("#r-search")); err != nil {
			t.Fatal(err)
		}
		waitRange(want)
	}
	// The detail of app/db: its metadata, its two versions, its events.
	if err := chromedp.Do(bctx, chromedp.SetValue("#r-q", "app/db"), chromedp.Click("#r-search")); err != nil {
		t.Fatal(err)
	}
	waitRange("1–1 of 1")
	if err := chromedp.Do(bctx, chromedp.Click(`#records button[data-detail="arca://app/db"]`), chromedp.WaitVisible(`#detail[data-ref="arca://app/db"]`)); err != nil {
		t.Fatalf("the detail of app/db: %v", err)
	}
	meta, versions, events := text(t, bctx, "#detail-meta"), text(t, bctx, "#detail-versions"), text(t, bctx, "#detail-events")
	if !strings.Contains(meta, "version") || !strings.Contains(meta, "2") {
		t.Errorf("the detail's metadata: %q", meta)
	}
	if !strings.Contains(versions, "current") || !strings.Contains(versions, "previous") {
		t.Errorf("the detail's versions: %q", versions)
	}
	for _, want := range []string{"put", "rotate", "history", "ui", "ana", "laptop"} {
		if !strings.Contains(events, want) {
			t.Errorf("the detail's events lack %q: %q", want, events)
		}
	}
	// The page's own history read of app/db is an event of source ui,
	// marked as the page's.
	if n := pagetest.Run(t, bctx, chromedp.Evaluate[int](`document.querySelectorAll("#detail-events td.source-ui").length`)); n < 1 {
		t.Error("the page's own read is not marked as the page's")
	}
	html := pagetest.Run(t, bctx, chromedp.OuterHTML("html"))
	noCanary(t, "the page with a detail shown", []byte(html))
	if errs := consoleErrors(); len(errs) > 0 {
		t.Errorf("errors in the browser console: %q", errs)
	}
}

// The chart has a time axis, and a range chosen by dragging across it
// fills since and until and reads the trail again for that range alone.
func TestChartRangeInBrowser(t *testing.T) {
	f := newFixture(t)
	bctx, consoleErrors := pagetest.Browser(t)
	openReady(t, bctx, f.http.URL)
	ticks := pagetest.Run(t, bctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#chart text.tick")).map((e) => e.textContent)`))
	if len(ticks) != 7 || ticks[0] == "" || ticks[0] == ticks[6] {
		t.Fatalf("the time axis: %q", ticks)
	}
	before := text(t, bctx, "#matched")
	// Drag over the chart's left half: the first events.
	drag := `(() => {
		const svg = document.querySelector("#chart svg"), box = svg.getBoundingClientRect();
		const at = (type, fx) => svg.dispatchEvent(new MouseEvent(type, {bubbles: true, clientX: box.left + fx * box.width, clientY: box.top + 10}));
		at("mousedown", 0); at("mousemove", 0.5); at("mouseup", 0.5);
		return true;
	})()`
	pagetest.Run(t, bctx, chromedp.Evaluate[bool](drag))
	waitJS(t, bctx, `document.getElementById("f-since").value !== "" && document.getElementById("matched").textContent !== `+fmt.Sprintf("%q", before))
	since, until := pagetest.Run(t, bctx, chromedp.Value("#f-since")), pagetest.Run(t, bctx, chromedp.Value("#f-until"))
	s, err1 := time.Parse(time.RFC3339Nano, since)
	u, err2 := time.Parse(time.RFC3339Nano, until)
	if err1 != nil || err2 != nil || !u.After(s) || !strings.HasPrefix(text(t, bctx, "#range"), "range: ") {
		t.Fatalf("the range: %q to %q", since, until)
	}
	var after, all int
	fmt.Sscan(text(t, bctx, "#matched"), &after)
	fmt.Sscan(before, &all)
	if after < 1 || after >= all {
		t.Fatalf("the range picks %d of %d events", after, all)
	}
	// The whole trail again.
	if err := chromedp.Do(bctx, chromedp.Click("#range-reset")); err != nil {
		t.Fatal(err)
	}
	// (the page's own reads have added to the trail since)
	waitJS(t, bctx, `document.getElementById("f-since").value === "" && Number(document.getElementById("matched").textContent) >= `+before)
	if errs := consoleErrors(); len(errs) > 0 {
		t.Errorf("errors in the browser console: %q", errs)
	}
}

// arca ui FILE...: the CLI's trail, a serve wire with a decider's denial
// and a trail whose chain is broken, merged: each file's chain on the
// page (the broken one, where), the denial with its verdict, each event
// with its file.
func TestSeveralTrailsInBrowser(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	wire := filepath.Join(dir, "wire.log")
	var buf strings.Builder
	clock := time.Now().Add(-time.Hour)
	w := audit.NewWriter(&buf, audit.SourceServe, func() time.Time { clock = clock.Add(time.Second); return clock })
	for _, e := range []audit.Event{
		{Event: "start", Message: "serving", User: "svc", Host: "ci-1"},
		{Event: "denied", Op: "get", Outcome: audit.Denied, Env: "default", Ref: "prod/db", Actor: "agent:ci", Code: "denied",
			Message: "denied by policy: agents read dev only", Policy: &audit.Policy{Allow: false, Reason: "agents read dev only"}},
		{Event: "get", Op: "get", Outcome: audit.OK, Env: "default", Ref: "dev/db", Actor: "agent:ci", Policy: &audit.Policy{Allow: true, Reason: "pdp unreachable: timeout", Degraded: true}},
	} {
		if err := w.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(wire, []byte(buf.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(dir, "broken.log")
	lines := strings.SplitAfter(buf.String(), "\n")
	if err := os.WriteFile(broken, []byte(lines[0]+lines[2]), 0o600); err != nil { // line 2 removed
		t.Fatal(err)
	}
	s, err := New(Options{Token: testToken, Vaults: access.Service{Service: f.svc}, Envs: []string{"default"}, AuditFiles: []string{f.auditFile, wire, broken}})
	if err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, s)
	bctx, consoleErrors := pagetest.Browser(t)
	openReady(t, bctx, srv)
	chains := pagetest.Run(t, bctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#chains li")).map((li) => li.dataset.ok + " " + li.textContent)`))
	if len(chains) != 3 || !strings.HasPrefix(chains[0], "true ") || !strings.HasPrefix(chains[1], "true "+wire+": holds, 3 events") ||
		!strings.HasPrefix(chains[2], "false "+broken+": BROKEN at line 2") {
		t.Fatalf("the chains: %q", chains)
	}
	if c := text(t, bctx, "#chain"); !strings.HasPrefix(c, "The chain does NOT hold") {
		t.Errorf("the chain's line: %q", c)
	}
	denied, events := text(t, bctx, "#denied"), text(t, bctx, "#events")
	if !strings.Contains(denied, "deny: agents read dev only") || !strings.Contains(denied, "wire.log") {
		t.Errorf("the denials: %q", denied)
	}
	for _, want := range []string{"deny: agents read dev only", "allow (degraded): pdp unreachable: timeout", "wire.log", "broken.log", "audit.log", "agent:ci", "serve"} {
		if !strings.Contains(events, want) {
			t.Errorf("the events lack %q: %q", want, events)
		}
	}
	if errs := consoleErrors(); len(errs) > 0 {
		t.Errorf("errors in the browser console: %q", errs)
	}
}

// While the data loads, the page says so: the body is aria-busy, the
// loading overlay shows and data-ready is not set; once every part is on
// the page, the overlay is gone and data-ready is set. The vaults' list
// is held until the test has seen the loading state.
func TestLoadingStateInBrowser(t *testing.T) {
	f := newFixture(t)
	release := make(chan struct{})
	s, err := New(Options{Token: testToken, Vaults: heldVaults{Vaults: access.Service{Service: f.svc}, release: release}, Envs: []string{"default"}, AuditFiles: []string{f.auditFile}})
	if err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, s)
	bctx, _ := pagetest.Browser(t)
	if err := chromedp.Do(bctx, chromedp.Navigate(srv+"/#token="+testToken), chromedp.WaitVisible("#loading")); err != nil {
		close(release)
		t.Fatalf("no loading state: %v", err)
	}
	busy := pagetest.Run(t, bctx, chromedp.Evaluate[string](`document.body.getAttribute("aria-busy") + " " + (document.body.dataset.ready || "none") + " " + document.getElementById("loading").textContent`))
	close(release)
	if !strings.HasPrefix(busy, "true none Loading") {
		t.Fatalf("while loading: %q", busy)
	}
	if err := chromedp.Do(bctx, chromedp.WaitVisible(`body[data-ready="true"]`), chromedp.WaitNotVisible("#loading")); err != nil {
		t.Fatalf("after loading: %v", err)
	}
	if b := pagetest.Run(t, bctx, chromedp.Evaluate[string](`document.body.getAttribute("aria-busy")`)); b != "false" {
		t.Fatalf("aria-busy after loading: %q", b)
	}
}

// heldVaults holds every List until release is closed.
type heldVaults struct {
	Vaults
	release chan struct{}
}

func (h heldVaults) List(ctx context.Context, req ops.Request) (ops.ListResult, error) {
	select {
	case <-h.release:
	case <-ctx.Done():
		return ops.ListResult{}, ctx.Err()
	}
	return h.Vaults.List(ctx, req)
}

// startServer serves s until the test ends and returns its URL.
func startServer(t testing.TB, s *Server) string {
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv.URL
}
