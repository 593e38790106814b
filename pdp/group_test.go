package pdp

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestChildLeadsItsOwnGroup: the child's process group id is its own pid,
// not arca's group, so that killing the group reaches only the PDP.
func TestChildLeadsItsOwnGroup(t *testing.T) {
	cfg := Config{
		Exec: `set -- $(cat /proc/$$/stat); if [ "$5" = "$$" ]; then echo '{"allow":true}'; ` +
			`else echo '{"allow":false,"reason":"pgid '$5' pid '$$'"}'; fi`,
		Timeout: quick, Environ: testEnviron(),
	}
	v, err := Decide(context.Background(), cfg, getReq)
	if err != nil || !v.Allow {
		t.Fatalf("verdict %+v, err %v", v, err)
	}
}

// TestNoGrandchildSurvives records the pids of background grandchildren and
// checks each is dead once Decide returns, on a verdict, on a timeout and
// when the caller cancels the decision (serve stopping on a signal).
func TestNoGrandchildSurvives(t *testing.T) {
	tests := []struct {
		name, tail, why string
		cancel          bool
	}{
		{"after a verdict", `echo '{"allow":true}'`, "", false},
		{"after a timeout", `sleep 30`, "timed out", false},
		{"after a cancel", `sleep 30`, "cancelled: context canceled", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pids := filepath.Join(t.TempDir(), "pids")
			exec := "sleep 30 >/dev/null 2>&1 & echo $! >> " + sq(pids) + "; " +
				"(sleep 30 >/dev/null 2>&1 & echo $! >> " + sq(pids) + "; sleep 30) >/dev/null & " +
				"while [ $(wc -l < " + sq(pids) + ") -lt 2 ]; do sleep 0.01; done; " + tt.tail
			cfg := Config{Exec: exec, Timeout: short, Environ: testEnviron()}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancel {
				cfg.Timeout = time.Minute
				go cancelOnceRecorded(pids, 2, cancel)
			}
			_, pgid, err := decide(ctx, cfg, getReq, "sh")
			if tt.why == "" && err != nil {
				t.Fatal(err)
			}
			if tt.why != "" {
				wantUnreachable(t, err, tt.why)
			}
			wantGroupGone(t, pgid)
			b, _ := os.ReadFile(pids)
			fields := strings.Fields(string(b))
			if len(fields) != 2 {
				t.Fatalf("recorded pids %q, want 2", b)
			}
			for _, f := range fields {
				pid, _ := strconv.Atoi(f)
				wantDead(t, pid)
			}
		})
	}
}

// cancelOnceRecorded calls cancel once file holds n lines (or after a
// while, so that a test cannot hang on it). It polls the file: the PDP is
// another process, and the file is all it says of where it is.
func cancelOnceRecorded(file string, n int, cancel func()) {
	defer cancel()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if b, _ := os.ReadFile(file); strings.Count(string(b), "\n") >= n {
			return
		}
	}
}

// TestConcurrentDecisions runs every row at once — honest, hanging,
// flooding and lying PDPs side by side: each decision gets its own outcome
// within its own deadline, and no group survives.
func TestConcurrentDecisions(t *testing.T) {
	var wg sync.WaitGroup
	for _, r := range rows() {
		wg.Go(func() {
			t.Run(r.name, func(t *testing.T) { r.checkOutcome(t) })
		})
	}
	wg.Wait()
}
