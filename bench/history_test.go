package bench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arca-secrets/arca/ops/backend"
	"github.com/arca-secrets/arca/ops/opstest"
	"github.com/arca-secrets/arca/serve"
)

// BenchmarkServeHistoryVsGet runs the serve loop in process, as
// BenchmarkServeInProcess does, over a file vault of 1,000 names of 10
// versions each: a session of history requests against one of get
// requests, in turns, each of 2,000 requests of names spread over the
// vault. It reports the median ns a request of each and their ratio
// (issue 32's target: history at most 2× a get).
func BenchmarkServeHistoryVsGet(b *testing.B) {
	o := opstest.New(b, opstest.Options{})
	names := o.FillVersions(b, 1000, 10)
	o.Service.Close() // serve opens the vault itself
	const per = 2000
	session := func(op string) string {
		var sb strings.Builder
		for i := range per {
			fmt.Fprintf(&sb, `{"id":%d,"op":%q,"ref":"arca://%s","actor":"agent:bench"}`+"\n", i, op, names[(i*7919)%len(names)])
		}
		return sb.String()
	}
	ins := [2]string{session("get"), session("history")}
	var took [2][]float64
	first := 0
	for b.Loop() {
		for k := range 2 {
			w := (first + k) % 2
			t0 := time.Now()
			err := serve.Serve(context.Background(), serve.Options{Stdin: strings.NewReader(ins[w]), Stdout: io.Discard, Stderr: io.Discard, Config: o.Config, Backends: backend.Kinds{}})
			if err != nil {
				b.Fatal(err)
			}
			took[w] = append(took[w], float64(time.Since(t0))/per)
		}
		first ^= 1
	}
	var median [2]float64
	for w, name := range []string{"get", "history"} {
		slices.Sort(took[w])
		median[w] = took[w][len(took[w])/2]
		b.ReportMetric(median[w], "ns/"+name)
	}
	b.ReportMetric(median[1]/median[0], "history/get")
}

// TestServeHistorySession: the sessions the benchmark times answer what
// they ask, every history request with the name's 10 versions.
func TestServeHistorySession(t *testing.T) {
	o := opstest.New(t, opstest.Options{})
	names := o.FillVersions(t, 3, 10)
	o.Service.Close()
	var in, out strings.Builder
	for i, n := range names {
		fmt.Fprintf(&in, `{"id":%d,"op":"history","ref":"arca://%s"}`+"\n", i, n)
	}
	if err := serve.Serve(context.Background(), serve.Options{Stdin: strings.NewReader(in.String()), Stdout: &out, Stderr: io.Discard, Config: o.Config, Backends: backend.Kinds{}}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != len(names) {
		t.Fatalf("%d answers to %d requests", len(lines), len(names))
	}
	for _, l := range lines {
		if !strings.Contains(l, `"ok":true`) || strings.Count(l, `"version":`) != 10 {
			t.Fatalf("answer %s", l)
		}
	}
}
