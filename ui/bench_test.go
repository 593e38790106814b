package ui

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/bench/synth"
	"github.com/arca-secrets/arca/ops/access"
	"github.com/arca-secrets/arca/ops/bulk"
	"github.com/arca-secrets/arca/ops/opstest"
	"github.com/arca-secrets/arca/serve/approvalpage/pagetest"
	"github.com/chromedp/chromedp"
)

// BenchmarkFirstPage times the page's first load in headless Chromium,
// from opening the URL (the token taken from it) to data-ready (every
// part on the page: records, health, deleted names, trail, chart, chains),
// over a file vault of 100,000 records and a trail of 1,000,000 events
// (bench/synth's, as the CLI writes them), and, in turns in the same run,
// over the fixture's vault of three records and its short trail. Each
// load starts from a blank page in the same tab. It reports the medians
// in milliseconds (`ms-to-ready@100k`, `ms-to-ready@3`), their ratio, and
// the time the trail took to index before the server was up (`warm-s`).
// The vault is written in one bulk import (ops/bulk), the page's own
// reads appended to the trail as arca ui appends them.
func BenchmarkFirstPage(b *testing.B) {
	big, warm := bigPage(b, 100_000, 1_000_000)
	small := startServer(b, newFixture(b).server)
	bctx, _ := pagetest.BrowserFor(b, 30*time.Minute)
	var tBig, tSmall []float64
	load := func(base string) float64 {
		if err := chromedp.Do(bctx, chromedp.Navigate("about:blank")); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if err := chromedp.Do(bctx, chromedp.Navigate(base+"/#token="+testToken), chromedp.WaitVisible(`body[data-ready="true"]`)); err != nil {
			b.Fatalf("the page: %v", err)
		}
		return float64(time.Since(start).Microseconds()) / 1000
	}
	load(small) // the browser's first page: not timed
	b.ResetTimer()
	for range b.N {
		tBig = append(tBig, load(big))
		tSmall = append(tSmall, load(small))
	}
	mb, ms := medianOf(tBig), medianOf(tSmall)
	b.ReportMetric(mb, "ms-to-ready@100k")
	b.ReportMetric(ms, "ms-to-ready@3")
	b.ReportMetric(mb/ms, "100k/3")
	b.ReportMetric(warm.Seconds(), "warm-s")
}

// bigPage serves the page over a file vault of records records and a
// trail of events events; it returns its URL and how long the trail took
// to index.
func bigPage(b *testing.B, records, events int) (string, time.Duration) {
	fx := opstest.New(b, opstest.Options{})
	items := bulk.NewPacked(records, records*24, records*32)
	for i := range records {
		if err := items.Add("bench", fmt.Sprintf("secret-%06d", i), fmt.Appendf(nil, "value of secret %d", i), ""); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := bulk.Import(context.Background(), fx.Service, bulk.Request{Items: items}); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "audit.log")
	if _, err := synth.WriteTrail(path, events); err != nil {
		b.Fatal(err)
	}
	af, err := audit.OpenFile(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { af.Close() })
	page := fx.NewService(b, opstest.Options{Audit: af, Source: audit.SourceUI})
	s, err := New(Options{Token: testToken, Vaults: access.Service{Service: page}, Envs: []string{"default"}, AuditFiles: []string{path}})
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if err := s.Warm(); err != nil {
		b.Fatal(err)
	}
	return startServer(b, s), time.Since(start)
}

func medianOf(xs []float64) float64 {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	return xs[len(xs)/2]
}
