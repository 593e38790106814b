package client

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BenchmarkPipelinedGet measures gets through the client, from 64
// concurrent callers, beside the raw pipe, in the same run: two serves
// spawned the same way (command, with the same options) and their stderr
// drained the same way (drain), the raw one sent bursts of get lines while
// its responses are read. The raw side does what the client must and no
// more: each line has an id of its own, formatted as it is written, and
// each response is matched to its request by the id it echoes. The turns
// alternate in rounds of 10,000 gets (some 50 ms), so that a machine's slow
// spell falls on all; client/raw is the ratio of their rates in this run
// (the target is at least 0.85). Both serves live for the whole run; the
// one not in its turn is idle.
//
// The raw serve also takes a third turn, window: the same pipe kept at 64
// requests in flight (as many lines written as were answered, once the
// answers read so far are read), which is what 64 callers can ask of serve
// with no client between; client/window is how near the client is to
// that, and window/raw what 64 in flight cost serve against its bursts.
// A fourth turn, deep, is the client with as many callers as its window
// holds (Options.MaxInFlight, 256 by default): deep/raw is the client
// pipelining as deep as it lets a caller. raw-cpu-ns/get and
// client-cpu-ns/get are this process's CPU time a get in the raw and the
// client turns; on Linux, raw-serve-cpu-ns/get and client-serve-cpu-ns/get
// are serve's in the same turns, and raw-cost/client-cost the ratio of the
// two sides' sums: the rate the client allows against the raw pipe's when
// the machine's cores are all taken, which its other work sways less.
func BenchmarkPipelinedGet(b *testing.B) {
	o := homeB(b)
	raw := startRaw(b, o)
	c, err := Start(context.Background(), o)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	const round = 10000
	var rawTime, clientTime, windowTime, deepTime time.Duration
	var rawCPU, clientCPU cpuTime
	var rawServeCPU, clientServeCPU time.Duration
	b.ResetTimer()
	for done := 0; done < b.N; done += round {
		n := min(round, b.N-done)
		rawCPU.start()
		at := serveCPU(raw.pid)
		rawTime += raw.gets(b, n)
		rawServeCPU += serveCPU(raw.pid) - at
		rawCPU.stop()
		clientCPU.start()
		at = serveCPU(c.cmd.Process.Pid)
		clientTime += clientGets(b, c, n, 64)
		clientServeCPU += serveCPU(c.cmd.Process.Pid) - at
		clientCPU.stop()
		windowTime += raw.window(b, n, 64)
		deepTime += clientGets(b, c, n, 256)
	}
	b.StopTimer()
	b.ReportMetric(float64(rawCPU.used.Nanoseconds())/float64(b.N), "raw-cpu-ns/get")
	b.ReportMetric(float64(clientCPU.used.Nanoseconds())/float64(b.N), "client-cpu-ns/get")
	if rawServeCPU > 0 && clientServeCPU > 0 {
		// Both sides' CPU a get, serve's and this process's: what a get
		// costs the machine, the rate it allows when the cores are taken.
		b.ReportMetric(float64(rawServeCPU.Nanoseconds())/float64(b.N), "raw-serve-cpu-ns/get")
		b.ReportMetric(float64(clientServeCPU.Nanoseconds())/float64(b.N), "client-serve-cpu-ns/get")
		b.ReportMetric(float64((rawServeCPU+rawCPU.used).Nanoseconds())/float64((clientServeCPU+clientCPU.used).Nanoseconds()), "raw-cost/client-cost")
	}
	rawRate := float64(b.N) / rawTime.Seconds()
	clientRate := float64(b.N) / clientTime.Seconds()
	windowRate := float64(b.N) / windowTime.Seconds()
	b.ReportMetric(rawRate, "raw-req/s")
	b.ReportMetric(clientRate, "client-req/s")
	b.ReportMetric(clientRate/rawRate, "client/raw")
	b.ReportMetric(windowRate/rawRate, "window/raw")
	b.ReportMetric(clientRate/windowRate, "client/window")
	b.ReportMetric(float64(b.N)/deepTime.Seconds()/rawRate, "deep/raw")
}

// cpuTime sums the CPU time this process spent (every thread's, user and
// system) between start and stop: what a turn cost on this side of the
// pipes, which a machine busy with other work sways less than the rates.
type cpuTime struct {
	used time.Duration
	at   time.Duration
}

func processCPU() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

func (t *cpuTime) start() { t.at = processCPU() }
func (t *cpuTime) stop()  { t.used += processCPU() - t.at }

// serveCPU is the CPU time process pid has run, every thread's, from
// Linux's /proc/PID/task/*/schedstat (nanoseconds); 0 where there is none.
func serveCPU(pid int) time.Duration {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var sum time.Duration
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var ns int64
		if _, err := fmt.Sscan(string(b), &ns); err == nil {
			sum += time.Duration(ns)
		}
	}
	return sum
}

// rawServe is serve on bare pipes, with no client between.
type rawServe struct {
	pid    int
	in     io.WriteCloser
	out    *bufio.Reader
	nextID uint64 // the id of the last line written
}

func startRaw(b *testing.B, o Options) *rawServe {
	cmd := command(o)
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() { drain(stderr); close(done) }()
	b.Cleanup(func() { in.Close(); <-done; cmd.Wait() })
	return &rawServe{pid: cmd.Process.Pid, in: in, out: bufio.NewReaderSize(out, 64<<10)}
}

// appendGets appends n get lines to buf, with the ids after first.
func appendGets(buf []byte, first uint64, n int) []byte {
	for id := first + 1; id <= first+uint64(n); id++ {
		buf = append(buf, `{"id":`...)
		buf = strconv.AppendUint(buf, id, 10)
		buf = append(buf, `,"op":"get","ref":"arca://app/db"}`+"\n"...)
	}
	return buf
}

// answer reads the next response and checks that it answers request id,
// as the client checks the id each response echoes.
func (r *rawServe) answer(b *testing.B, id uint64, idBuf []byte) {
	line, err := r.out.ReadSlice('\n')
	if err != nil {
		b.Fatal(err)
	}
	want := strconv.AppendUint(idBuf[:0], id, 10)
	if len(line) <= 6+len(want) || string(line[:6]) != `{"id":` || string(line[6:6+len(want)]) != string(want) || line[6+len(want)] != ',' {
		b.Fatalf("the response to request %d: %.40q", id, line)
	}
}

// gets writes n get lines in bursts of 1,000 while it reads the n
// responses, and returns how long that took.
func (r *rawServe) gets(b *testing.B, n int) time.Duration {
	first := r.nextID
	r.nextID += uint64(n)
	began := time.Now()
	go func() {
		var burst []byte
		for sent := 0; sent < n; sent += 1000 {
			burst = appendGets(burst[:0], first+uint64(sent), min(n-sent, 1000))
			r.in.Write(burst)
		}
	}()
	var idBuf [20]byte
	for i := range uint64(n) {
		r.answer(b, first+1+i, idBuf[:])
	}
	return time.Since(began)
}

// window writes n get lines keeping w of them in flight, from one
// goroutine: once the answers read so far are read, as many lines go out
// as were answered. It returns how long the n answers took.
func (r *rawServe) window(b *testing.B, n, w int) time.Duration {
	first := r.nextID
	r.nextID += uint64(n)
	var buf []byte
	var idBuf [20]byte
	began := time.Now()
	sent := min(n, w)
	buf = appendGets(buf[:0], first, sent)
	r.in.Write(buf)
	for answered := 1; answered <= n; answered++ {
		r.answer(b, first+uint64(answered), idBuf[:])
		if r.out.Buffered() == 0 && sent < n {
			k := min(answered+w-sent, n-sent)
			buf = appendGets(buf[:0], first+uint64(sent), k)
			r.in.Write(buf)
			sent += k
		}
	}
	return time.Since(began)
}

// clientGets makes n gets through c from callers goroutines, and returns
// how long they took.
func clientGets(b *testing.B, c *Client, n, callers int) time.Duration {
	ctx := context.Background()
	var wg sync.WaitGroup
	began := time.Now()
	for i := range callers {
		each := n / callers
		if i < n%callers {
			each++
		}
		wg.Go(func() {
			for range each {
				if _, err := c.Get(ctx, Request{Ref: "arca://app/db"}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return time.Since(began)
}

// homeB is home for a benchmark, with one record.
func homeB(b *testing.B) Options {
	dir := b.TempDir()
	env := []string{"HOME=" + dir, "PATH=/usr/bin:/bin"}
	for _, args := range [][]string{{"init"}, {"put", "arca://app/db"}} {
		cmd := exec.Command(arcaBin, args...)
		cmd.Env = env
		cmd.Stdin = strings.NewReader("s3cret-value-of-some-length-0123456789")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("arca %s: %v: %s", args[0], err, out)
		}
	}
	return Options{Binary: arcaBin, Environ: env, Dir: dir}
}

// BenchmarkDecodeGet decodes a get response as serve writes it, by the
// fast path and by encoding/json.
func BenchmarkDecodeGet(b *testing.B) {
	line := []byte(`{"id":12345,"ok":true,"result":{"ref":"arca://app/db","env":"default","value":"s3cret-value-of-some-length-0123456789","version":1,"created_at":"2026-11-30T08:14:14.381353202Z","updated_at":"2026-11-30T08:14:14.381353202Z"}}` + "\n")
	want := []byte("12345")
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var g Got
			if ok, err := fast(line, sent{id: want, ref: "arca://app/db", env: "default"}, &g); !ok || err != nil {
				b.Fatal(ok, err)
			}
		}
	})
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var g Got
			if err := slow(line, want, &g); err != nil {
				b.Fatal(err)
			}
		}
	})
}
