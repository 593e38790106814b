package serve

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/arca-secrets/arca/ops/backend"
	"github.com/arca-secrets/arca/vault/etcd/etcdtest"
)

// inFlightWindow is how many requests the benchmark's clients keep in
// flight.
const inFlightWindow = 64

// BenchmarkEtcdGetsInFlight measures gets of a shared vault on a 3-member
// cluster with 64 in flight, three ways in one run, each b.N gets:
//   - serve: one session (in this process, over real pipes) whose client
//     keeps 64 gets in flight, the session running the reads in its input
//     at once (up to manifest.MaxReads);
//   - serve-one: the same with Options.MaxReads 1, the reads run one at a
//     time, as serve ran them before;
//   - bare: the cluster's own client, 64 goroutines each making one
//     linearizable Get at a time of a key holding a sealed record's bytes.
//
// Reported: each one's time per get, the throughput ratios to bare, and
// this process's CPU per get (user+system; the etcd members are processes
// of their own, not counted).
func BenchmarkEtcdGetsInFlight(b *testing.B) {
	c := etcdtest.Start(b, 3)
	const records = 64
	f := etcdFixture(b, c.AllEndpoints(), "/arca/bench-reads/")
	var puts strings.Builder
	for i := range records {
		fmt.Fprintf(&puts, `{"id":%d,"op":"put","ref":"arca://app/r%d","value":"s3cret-value-of-some-length-%010d"}`+"\n", i, i, i)
	}
	if out := runSession(b, f, 0, []byte(puts.String())); bytes.Contains(out, []byte(`"ok":false`)) {
		b.Fatalf("puts: %s", out)
	}
	getLines := make([][]byte, records)
	for i := range getLines {
		getLines[i] = fmt.Appendf(nil, `{"id":%d,"op":"get","ref":"arca://app/r%d"}`+"\n", i, i)
	}
	raw := c.Client(b)
	ctx := context.Background()
	sealed := strings.Repeat("x", 160) // about a sealed record of that value
	for i := range records {
		if _, err := raw.Put(ctx, fmt.Sprintf("/bare/r%d", i), sealed); err != nil {
			b.Fatal(err)
		}
	}
	bare := func(n int) {
		var wg sync.WaitGroup
		next := make(chan int, inFlightWindow)
		for range inFlightWindow {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range next {
					if _, err := raw.Get(ctx, fmt.Sprintf("/bare/r%d", i%records)); err != nil {
						b.Error(err)
					}
				}
			}()
		}
		for i := range n {
			next <- i
		}
		close(next)
		wg.Wait()
	}
	// Each is warmed with a few windows' worth first, untimed.
	many, one := startPiped(b, f, 0), startPiped(b, f, 1)
	many.gets(b, getLines, 4*inFlightWindow)
	one.gets(b, getLines, 4*inFlightWindow)
	bare(4 * inFlightWindow)

	var serveT, oneT, bareT, serveCPU, oneCPU, bareCPU time.Duration
	n := 0
	for b.Loop() {
		// A few thousand gets per phase and iteration, in turns, so that
		// the phases share whatever else the machine is doing.
		const per = 1000
		t0, c0 := time.Now(), cpuTime(b)
		many.gets(b, getLines, per)
		t1, c1 := time.Now(), cpuTime(b)
		one.gets(b, getLines, per)
		t2, c2 := time.Now(), cpuTime(b)
		bare(per)
		t3, c3 := time.Now(), cpuTime(b)
		serveT, oneT, bareT = serveT+t1.Sub(t0), oneT+t2.Sub(t1), bareT+t3.Sub(t2)
		serveCPU, oneCPU, bareCPU = serveCPU+c1-c0, oneCPU+c2-c1, bareCPU+c3-c2
		n += per
	}
	fn := float64(n)
	b.ReportMetric(float64(serveT.Nanoseconds())/fn, "serve-ns/get")
	b.ReportMetric(float64(oneT.Nanoseconds())/fn, "serve-one-ns/get")
	b.ReportMetric(float64(bareT.Nanoseconds())/fn, "bare-ns/get")
	b.ReportMetric(float64(bareT)/float64(serveT), "serve/bare")
	b.ReportMetric(float64(bareT)/float64(oneT), "serve-one/bare")
	b.ReportMetric(float64(oneT)/float64(serveT), "serve/serve-one")
	b.ReportMetric(float64(serveCPU.Microseconds())/fn, "serve-cpu-us/get")
	b.ReportMetric(float64(oneCPU.Microseconds())/fn, "serve-one-cpu-us/get")
	b.ReportMetric(float64(bareCPU.Microseconds())/fn, "bare-cpu-us/get")
}

// pipedSession is one session (Options.MaxReads maxReads) over real
// pipes, in this process, open for the whole benchmark.
type pipedSession struct {
	in   *os.File
	out  *bufio.Scanner
	done chan error
}

func startPiped(b *testing.B, f *fixture, maxReads int) *pipedSession {
	b.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	p := &pipedSession{in: inW, out: bufio.NewScanner(outR), done: make(chan error, 1)}
	p.out.Buffer(make([]byte, 64<<10), 1<<20)
	go func() {
		err := Serve(context.Background(), Options{Stdin: inR, Stdout: outW, Stderr: io.Discard, Config: f.cfg,
			Backends: backend.Kinds{}, MaxReads: maxReads, Signals: make(chan os.Signal)})
		outW.Close()
		inR.Close()
		p.done <- err
	}()
	b.Cleanup(func() {
		inW.Close()
		for p.out.Scan() {
		}
		outR.Close()
		if err := <-p.done; err != nil {
			b.Error(err)
		}
	})
	return p
}

// gets sends n gets, the lines in turn, never more than inFlightWindow
// unanswered, and reads every answer.
func (p *pipedSession) gets(b *testing.B, getLines [][]byte, n int) {
	window := make(chan struct{}, inFlightWindow)
	sent := make(chan error, 1)
	go func() {
		for i := range n {
			window <- struct{}{}
			if _, err := p.in.Write(getLines[i%len(getLines)]); err != nil {
				sent <- err
				return
			}
		}
		sent <- nil
	}()
	for got := range n {
		if !p.out.Scan() {
			b.Fatalf("answer %d of %d: %v", got+1, n, p.out.Err())
		}
		if !bytes.Contains(p.out.Bytes(), []byte(`"ok":true`)) {
			b.Fatalf("answer %d: %s", got+1, p.out.Bytes())
		}
		<-window
	}
	if err := <-sent; err != nil {
		b.Fatal(err)
	}
}

// runSession runs one session over in and returns its stdout.
func runSession(b *testing.B, f *fixture, maxReads int, in []byte) []byte {
	b.Helper()
	var out bytes.Buffer
	err := Serve(context.Background(), Options{Stdin: bytes.NewReader(in), Stdout: &out, Stderr: io.Discard, Config: f.cfg,
		Backends: backend.Kinds{}, MaxReads: maxReads, Signals: make(chan os.Signal)})
	if err != nil {
		b.Fatal(err)
	}
	return out.Bytes()
}

// cpuTime is the CPU this process has used so far, user and system.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
