// Package synth makes the inputs of the benchmark programs: an audit
// trail of many events as the CLI writes them.
package synth

import (
	"bufio"
	"fmt"
	"os"
	"time"

	"github.com/arca-secrets/arca/audit"
)

// WriteTrail writes n events to path as the CLI writes them: gets, puts
// and denials of varied refs and actors, one chain.
func WriteTrail(path string, n int) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	clock := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	w := audit.NewWriter(bw, audit.SourceCLI, func() time.Time { clock = clock.Add(time.Millisecond); return clock })
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
			return 0, err
		}
	}
	if err := bw.Flush(); err != nil {
		return 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}
