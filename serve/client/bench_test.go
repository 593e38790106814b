package client

import (
	"bufio"
	"context"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// BenchmarkPipelinedGet measures gets through the client, from 64
// concurrent callers, beside the raw pipe in the same run: serve spawned
// the same way, a burst of get lines written while the responses are read.
// The ratio client/raw is the target (at least 0.8).
func BenchmarkPipelinedGet(b *testing.B) {
	o := homeB(b)
	b.Run("raw", func(b *testing.B) {
		cmd := exec.Command(o.Binary, "serve")
		cmd.Env, cmd.Dir = o.Environ, o.Dir
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		cmd.Stderr = io.Discard
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		defer func() { in.Close(); cmd.Wait() }()
		br := bufio.NewReaderSize(out, 64<<10)
		line := `{"id":1,"op":"get","ref":"arca://app/db"}` + "\n"
		burst := strings.Repeat(line, 1000)
		b.ResetTimer()
		go func() {
			for n := b.N; n > 0; n -= 1000 {
				io.WriteString(in, burst[:min(n, 1000)*len(line)])
			}
		}()
		for range b.N {
			if _, err := br.ReadBytes('\n'); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
	})
	b.Run("client", func(b *testing.B) {
		c, err := Start(context.Background(), o)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		ctx := context.Background()
		b.ResetTimer()
		var wg sync.WaitGroup
		per := (b.N + 63) / 64
		for range 64 {
			wg.Go(func() {
				for range per {
					if _, err := c.Get(ctx, Request{Ref: "arca://app/db"}); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		b.ReportMetric(float64(per*64)/b.Elapsed().Seconds(), "req/s")
	})
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
	return Options{Binary: arcaBin, Environ: env, Dir: dir, Config: ""}
}
