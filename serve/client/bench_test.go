package client

import (
	"bufio"
	"context"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkPipelinedGet measures gets through the client, from 64
// concurrent callers, beside the raw pipe, in the same run: two serves
// spawned the same way (command, with the same options) and their stderr
// drained the same way (drain), the raw one sent bursts of get lines while
// its responses are read. The two take turns in rounds of 10,000 gets
// (some 50 ms), so that a machine's slow spell falls on both; client/raw is
// the ratio of their rates in this run (the target is at least 0.85). Both
// serves live for the whole run; the one not in its turn is idle.
//
// The raw serve also takes a third turn, window: the same pipe kept at 64
// requests in flight (as many lines written as were answered, once the
// answers read so far are read), which is what 64 callers can ask of serve
// with no client between; client/window is how near the client is to
// that, and window/raw what 64 in flight cost serve against its bursts.
func BenchmarkPipelinedGet(b *testing.B) {
	o := homeB(b)
	raw := startRaw(b, o)
	c, err := Start(context.Background(), o)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	const round = 10000
	var rawTime, clientTime, windowTime time.Duration
	b.ResetTimer()
	for done := 0; done < b.N; done += round {
		n := min(round, b.N-done)
		rawTime += raw.gets(b, n)
		clientTime += clientGets(b, c, n)
		windowTime += raw.window(b, n, 64)
	}
	b.StopTimer()
	rawRate := float64(b.N) / rawTime.Seconds()
	clientRate := float64(b.N) / clientTime.Seconds()
	windowRate := float64(b.N) / windowTime.Seconds()
	b.ReportMetric(rawRate, "raw-req/s")
	b.ReportMetric(clientRate, "client-req/s")
	b.ReportMetric(clientRate/rawRate, "client/raw")
	b.ReportMetric(windowRate/rawRate, "window/raw")
	b.ReportMetric(clientRate/windowRate, "client/window")
}

// getLine is the get line the raw turns send.
const getLine = `{"id":1,"op":"get","ref":"arca://app/db"}` + "\n"

// rawServe is serve on bare pipes, with no client between.
type rawServe struct {
	in  io.WriteCloser
	out *bufio.Reader
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
	return &rawServe{in: in, out: bufio.NewReaderSize(out, 64<<10)}
}

// gets writes n get lines in bursts of 1,000 while it reads the n
// responses, and returns how long that took.
func (r *rawServe) gets(b *testing.B, n int) time.Duration {
	burst := strings.Repeat(getLine, 1000)
	began := time.Now()
	go func() {
		for left := n; left > 0; left -= 1000 {
			io.WriteString(r.in, burst[:min(left, 1000)*len(getLine)])
		}
	}()
	for range n {
		if _, err := r.out.ReadBytes('\n'); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(began)
}

// window writes n get lines keeping w of them in flight, from one
// goroutine: once the answers read so far are read, as many lines go out
// as were answered. It returns how long the n answers took.
func (r *rawServe) window(b *testing.B, n, w int) time.Duration {
	burst := strings.Repeat(getLine, w)
	began := time.Now()
	sent := min(n, w)
	io.WriteString(r.in, burst[:sent*len(getLine)])
	for answered := 1; answered <= n; answered++ {
		if _, err := r.out.ReadBytes('\n'); err != nil {
			b.Fatal(err)
		}
		if r.out.Buffered() == 0 && sent < n {
			k := min(answered+w-sent, n-sent)
			io.WriteString(r.in, burst[:k*len(getLine)])
			sent += k
		}
	}
	return time.Since(began)
}

// clientGets makes n gets through c from 64 goroutines, and returns how
// long they took.
func clientGets(b *testing.B, c *Client, n int) time.Duration {
	ctx := context.Background()
	var wg sync.WaitGroup
	began := time.Now()
	for i := range 64 {
		each := n / 64
		if i < n%64 {
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
