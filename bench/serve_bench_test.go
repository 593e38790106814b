package bench

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

const getLine = `{"id":1,"op":"get","ref":"arca://app/db","actor":"agent:bench"}` + "\n"

// BenchmarkServe measures arca serve beside the echo baseline, in one run:
// pipelined get throughput (audit on, events to a pipe) and lockstep round
// trips, each loop measured after the other. BenchmarkServeLockstep
// interleaves the two for a drift-free lockstep ratio.
func BenchmarkServe(b *testing.B) {
	bins := build(b)
	bins.arcaCmd(b, "", "init")
	bins.arcaCmd(b, "s3cret-value-of-some-length-0123456789", "put", "arca://app/db")
	loops := []struct {
		name string
		path string
		args []string
	}{
		{"echo", bins.echo, nil},
		{"arca", bins.arca, []string{"serve"}},
	}
	for _, l := range loops {
		b.Run("pipelined/"+l.name, func(b *testing.B) {
			p := start(b, bins.env(), l.path, l.args...)
			p.roundTrip(b, getLine)
			burst := strings.Repeat(getLine, 1000)
			b.ResetTimer()
			go func() {
				for n := b.N; n > 0; n -= 1000 {
					io.WriteString(p.in, burst[:min(n, 1000)*len(getLine)])
				}
			}()
			for range b.N {
				if _, err := p.out.ReadSlice('\n'); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
		b.Run("lockstep/"+l.name, func(b *testing.B) {
			p := start(b, bins.env(), l.path, l.args...)
			p.roundTrip(b, getLine)
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				p.roundTrip(b, getLine)
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
		})
	}
}

// BenchmarkServeLockstep measures one request at a time: write a line, wait
// for its answer. Echo and arca run side by side and take turns, one round
// trip each per iteration, so whatever the machine is doing meanwhile falls
// on both alike; p50-ratio is arca's median over echo's.
func BenchmarkServeLockstep(b *testing.B) {
	bins := build(b)
	bins.arcaCmd(b, "", "init")
	bins.arcaCmd(b, "s3cret-value-of-some-length-0123456789", "put", "arca://app/db")
	echo := start(b, bins.env(), bins.echo)
	arca := start(b, bins.env(), bins.arca, "serve")
	echo.roundTrip(b, getLine)
	arca.roundTrip(b, getLine)
	latEcho := make([]time.Duration, 0, b.N)
	latArca := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		echo.roundTrip(b, getLine)
		t1 := time.Now()
		arca.roundTrip(b, getLine)
		latEcho = append(latEcho, t1.Sub(t0))
		latArca = append(latArca, time.Since(t1))
	}
	b.StopTimer()
	pct := func(lat []time.Duration, p int) float64 {
		slices.Sort(lat)
		return float64(lat[len(lat)*p/100].Nanoseconds())
	}
	e50, a50 := pct(latEcho, 50), pct(latArca, 50)
	b.ReportMetric(e50, "echo-p50-ns")
	b.ReportMetric(pct(latEcho, 99), "echo-p99-ns")
	b.ReportMetric(a50, "arca-p50-ns")
	b.ReportMetric(pct(latArca, 99), "arca-p99-ns")
	b.ReportMetric(a50/e50, "p50-ratio")
}

// BenchmarkServeMemory reports serve's resident memory: idle after one
// request, and the high-water mark after a 64 MiB line. The peak does not
// grow with the line (the reader holds at most the line cap of it): a
// second session is sent a 128 MiB line, and the ratio of the two peaks
// is reported beside them.
func BenchmarkServeMemory(b *testing.B) {
	bins := build(b)
	bins.arcaCmd(b, "", "init")
	for range b.N {
		idle, peak := serveMemory(b, bins, 64)
		_, peak2 := serveMemory(b, bins, 128)
		b.ReportMetric(float64(idle)/1024, "idle-MB")
		b.ReportMetric(float64(peak)/1024, "peak-MB")
		b.ReportMetric(float64(peak2)/1024, "peak-MB@128MiB")
		b.ReportMetric(float64(peak2)/float64(peak), "peak@128MiB/peak@64MiB")
	}
}

// serveMemory runs one serve session: a request, then a line of mib MiB
// (answered bad_request), then another request. It returns the resident
// memory (KiB) after the first request and the high-water mark at the end.
func serveMemory(b *testing.B, bins binaries, mib int) (idle, peak int) {
	p := start(b, bins.env(), bins.arca, "serve")
	defer p.stop()
	p.roundTrip(b, `{"op":"manifest"}`+"\n")
	idle = rss(b, p.cmd.Process.Pid, "VmRSS")
	go func() {
		chunk := strings.Repeat("x", 1<<20)
		io.WriteString(p.in, `{"op":"get","ref":"`)
		for range mib {
			io.WriteString(p.in, chunk)
		}
		io.WriteString(p.in, "\"}\n")
	}()
	if resp, err := p.out.ReadString('\n'); err != nil || !strings.Contains(resp, "bad_request") {
		b.Fatalf("%d MiB line: %q, %v", mib, resp, err)
	}
	p.roundTrip(b, `{"op":"list"}`+"\n")
	return idle, rss(b, p.cmd.Process.Pid, "VmHWM")
}

// BenchmarkServePDP is pipelined get throughput with an allow-all policy
// decision point: every request spawns `sh -c` once, which dominates.
func BenchmarkServePDP(b *testing.B) {
	bins := build(b)
	bins.arcaCmd(b, "", "init")
	bins.arcaCmd(b, "s3cret-value-of-some-length-0123456789", "put", "arca://app/db")
	cfg := filepath.Join(bins.home, "pdp.toml")
	if err := os.WriteFile(cfg, []byte("[serve.pdp]\nexec = \"echo '{\\\"allow\\\":true}'\"\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	p := start(b, bins.env(), bins.arca, "serve", "--config", cfg)
	if resp := p.roundTrip(b, getLine); !strings.Contains(resp, `"policy":{"allow":true}`) {
		b.Fatalf("no verdict on the response: %s", resp)
	}
	b.ResetTimer()
	go func() {
		for range b.N {
			io.WriteString(p.in, getLine)
		}
	}()
	for range b.N {
		if _, err := p.out.ReadSlice('\n'); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}
