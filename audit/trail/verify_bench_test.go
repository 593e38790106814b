package trail

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/arca-secrets/arca/audit"
)

// BenchmarkVerify1M verifies a trail of 1,000,000 events as the CLI
// writes them (get, put and denied events of varied refs and actors,
// about 250 bytes a line), read from memory: the chain's cost, not the
// disk's.
func BenchmarkVerify1M(b *testing.B) {
	const n = 1_000_000
	var buf bytes.Buffer
	clock := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	w := audit.NewWriter(&buf, audit.SourceCLI, func() time.Time { clock = clock.Add(time.Millisecond); return clock })
	for i := range n {
		e := audit.Event{Event: "get", Op: "get", Outcome: audit.OK, Env: "prod", Ref: fmt.Sprintf("app/secret-%05d", i%50000), Actor: "agent-7", Version: 3}
		switch i % 10 {
		case 3:
			e = audit.Event{Event: "put", Op: "put", Outcome: audit.OK, Env: "prod", Ref: fmt.Sprintf("app/secret-%05d", i%50000), Version: 4}
		case 7:
			e = audit.Event{Event: "denied", Op: "get", Outcome: audit.Denied, Env: "prod", Ref: "billing/card", Actor: "agent-9",
				Code: "denied", Message: "denied by policy: agents may not read billing", Policy: &audit.Policy{Reason: "agents may not read billing"}}
		}
		if err := w.Write(e); err != nil {
			b.Fatal(err)
		}
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportMetric(float64(len(data))/n, "bytes/event")
	for b.Loop() {
		res, err := Verify(bytes.NewReader(data), nil)
		if err != nil || res.Lines != n {
			b.Fatalf("%+v, %v", res, err)
		}
	}
}
