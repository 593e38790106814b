package bench

import (
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// turn is how many pipelined requests one loop answers before the next
// takes its turn: enough to keep a pipe full, few enough that the
// machine's drift falls on every loop alike.
const turn = 2000

// loopsInTurn starts the echo baseline, this tree's arca serve, echo
// -wire (the baseline paying for an audit wire of arca's size: the floor
// of a loop that audits) and, when $ARCA_BASELINE names a binary (for
// instance one built from main), that binary's serve too, each over a
// vault holding the get's secret.
func loopsInTurn(b *testing.B) (names []string, procs []*proc) {
	bins := build(b)
	bins.arcaCmd(b, "", "init")
	bins.arcaCmd(b, "s3cret-value-of-some-length-0123456789", "put", "arca://app/db")
	names = []string{"echo", "arca", "wire"}
	procs = []*proc{start(b, bins.env(), bins.echo), start(b, bins.env(), bins.arca, "serve"), start(b, bins.env(), bins.echo, "-wire")}
	if base := os.Getenv("ARCA_BASELINE"); base != "" {
		names = append(names, "baseline")
		procs = append(procs, start(b, bins.env(), base, "serve"))
	}
	for _, p := range procs {
		p.roundTrip(b, getLine)
	}
	return names, procs
}

// BenchmarkServePipelinedTurns is pipelined get throughput with the loops
// taking turns: echo, arca, echo -wire (then the baseline binary, if any), turn
// requests each, until each has answered b.N. Every loop's rate is
// reported, and arca's over echo's, over echo -wire's and over the
// baseline's (echo -wire's over echo's too) as the median
// over rounds of the ratio within a round, so a burst of other work on the
// machine moves one round's ratio, not the whole run's.
func BenchmarkServePipelinedTurns(b *testing.B) {
	names, procs := loopsInTurn(b)
	burst := strings.Repeat(getLine, turn)
	spent := make([]time.Duration, len(procs))
	var vsEcho, vsWire, wireEcho, vsBase []float64
	round := make([]time.Duration, len(procs))
	b.ResetTimer()
	for done := 0; done < b.N; done += turn {
		n := min(turn, b.N-done)
		for i, p := range procs {
			t0 := time.Now()
			go io.WriteString(p.in, burst[:n*len(getLine)])
			for range n {
				if _, err := p.out.ReadSlice('\n'); err != nil {
					b.Fatal(err)
				}
			}
			round[i] = time.Since(t0)
			spent[i] += round[i]
		}
		vsEcho = append(vsEcho, round[0].Seconds()/round[1].Seconds())
		vsWire = append(vsWire, round[2].Seconds()/round[1].Seconds())
		wireEcho = append(wireEcho, round[0].Seconds()/round[2].Seconds())
		if len(procs) > 3 {
			vsBase = append(vsBase, round[3].Seconds()/round[1].Seconds())
		}
	}
	b.StopTimer()
	for i, name := range names {
		b.ReportMetric(float64(b.N)/spent[i].Seconds(), name+"-req/s")
	}
	b.ReportMetric(median(vsEcho), "arca/echo")
	b.ReportMetric(median(vsWire), "arca/wire")
	b.ReportMetric(median(wireEcho), "wire/echo")
	if len(procs) > 3 {
		b.ReportMetric(median(vsBase), "arca/baseline")
	}
}

// median is the middle of xs (which it sorts).
func median(xs []float64) float64 {
	slices.Sort(xs)
	return xs[len(xs)/2]
}

// BenchmarkServeLockstepTurns is BenchmarkServeLockstep with echo -wire
// and the baseline binary beside, when $ARCA_BASELINE names one: one round
// trip of each loop per iteration, in turns; p50 and p99 of each, and
// arca's p50 over echo's, echo -wire's (and the baseline's).
func BenchmarkServeLockstepTurns(b *testing.B) {
	names, procs := loopsInTurn(b)
	lat := make([][]time.Duration, len(procs))
	for i := range lat {
		lat[i] = make([]time.Duration, 0, b.N)
	}
	b.ResetTimer()
	for range b.N {
		for i, p := range procs {
			t0 := time.Now()
			p.roundTrip(b, getLine)
			lat[i] = append(lat[i], time.Since(t0))
		}
	}
	b.StopTimer()
	p50 := make([]float64, len(procs))
	for i, name := range names {
		slices.Sort(lat[i])
		p50[i] = float64(lat[i][len(lat[i])/2].Nanoseconds())
		b.ReportMetric(p50[i], name+"-p50-ns")
		b.ReportMetric(float64(lat[i][len(lat[i])*99/100].Nanoseconds()), name+"-p99-ns")
	}
	b.ReportMetric(p50[1]/p50[0], "p50-ratio")
	b.ReportMetric(p50[1]/p50[2], "p50-vs-wire")
	if len(procs) > 3 {
		b.ReportMetric(p50[1]/p50[3], "p50-vs-baseline")
	}
}
