package trail

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/arca-secrets/arca/audit"
)

// BenchmarkIndexVsVerify reads one trail of 1,000,000 events (gets, puts
// and denials, as the CLI writes them) into a fresh index and through
// Verify, in turns, and reports the index's time over Verify's
// (`index/verify`).
func BenchmarkIndexVsVerify(b *testing.B) {
	path := filepath.Join(b.TempDir(), "audit.log")
	writeBenchTrail(b, path, 1_000_000)
	var index, verify time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		x := NewIndex(path)
		if err := x.Update(); err != nil || x.bad != nil || x.broken != nil {
			b.Fatalf("index: %v %v %v", err, x.bad, x.broken)
		}
		index += time.Since(start)
		start = time.Now()
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Verify(f, nil); err != nil {
			b.Fatal(err)
		}
		f.Close()
		verify += time.Since(start)
	}
	b.ReportMetric(index.Seconds()/float64(b.N), "index-s")
	b.ReportMetric(verify.Seconds()/float64(b.N), "verify-s")
	b.ReportMetric(float64(index)/float64(verify), "index/verify")
}

// writeBenchTrail writes n events to path as the CLI writes them.
func writeBenchTrail(b *testing.B, path string, n int) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	clock := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	w := audit.NewWriter(bw, audit.SourceCLI, func() time.Time { clock = clock.Add(time.Millisecond); return clock })
	w.SetWho(audit.Who{User: "ana", Host: "laptop"})
	for i := range n {
		e := audit.Event{Event: "get", Op: "get", Outcome: audit.OK, Env: "prod", Ref: fmt.Sprintf("app/secret-%05d", i%50000), Actor: "agent-7", Version: 3}
		if i%10 == 7 {
			e = audit.Event{Event: "denied", Op: "get", Outcome: audit.Denied, Env: "prod", Ref: "billing/card", Actor: "agent-9",
				Code: "denied", Message: "denied by policy: agents may not read billing", Policy: &audit.Policy{Reason: "agents may not read billing"}}
		}
		if err := w.Write(e); err != nil {
			b.Fatal(err)
		}
	}
	if err := bw.Flush(); err != nil {
		b.Fatal(err)
	}
}
