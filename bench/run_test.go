package bench

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkRunCat pipes 64 MiB of text from a file through `arca run --
// cat` to /dev/null, beside `cat` alone over the same file in the same
// loop: the cost arca run adds to a command that writes a lot. "nothing"
// injects no secret, so no value is registered and the child gets arca's
// stdout; "unseen" injects one value that never occurs, so the output
// goes through a pipe and a scrub stream. ratio is the run's total time
// over cat's (1.05 is 5% added), each run whole: arca's start, the vault
// read and the child's. start-ms is `arca run -- true` with the same
// flags, in the same loop, and bytes-ratio (run - start) / cat: what the
// 64 MiB cost through arca against cat alone, its start set apart.
func BenchmarkRunCat(b *testing.B) {
	bins := build(b)
	bins.arcaCmd(b, "", "init")
	bins.arcaCmd(b, "unseen-value-4f0c9b2e7a", "put", "arca://app/k")
	text := filepath.Join(b.TempDir(), "text")
	line := []byte("2026-12-06T09:00:00Z info request served path=/api/v1/items status=200 bytes=5120\n")
	if err := os.WriteFile(text, bytes.Repeat(line, (64<<20)/len(line)+1)[:64<<20], 0o600); err != nil {
		b.Fatal(err)
	}
	runOnce := func(b *testing.B, name string, args ...string) time.Duration {
		in, err := os.Open(text)
		if err != nil {
			b.Fatal(err)
		}
		defer in.Close()
		out, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			b.Fatal(err)
		}
		defer out.Close()
		cmd := exec.Command(name, args...)
		cmd.Env, cmd.Stdin, cmd.Stdout = bins.env(), in, out
		var errb bytes.Buffer
		cmd.Stderr = &errb
		start := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("%s %q: %v %s", name, args, err, errb.Bytes())
		}
		return time.Since(start)
	}
	for _, c := range []struct {
		name  string
		flags []string
	}{
		{"nothing", []string{"run"}},
		{"unseen", []string{"run", "--secret", "K=arca://app/k"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var run, cat, start time.Duration
			for range b.N {
				cat += runOnce(b, "cat")
				run += runOnce(b, bins.arca, append(c.flags, "--", "cat")...)
				start += runOnce(b, bins.arca, append(c.flags, "--", "true")...)
			}
			b.SetBytes(64 << 20)
			ms := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N) / 1e6 }
			b.ReportMetric(ms(cat), "cat-ms/op")
			b.ReportMetric(ms(run), "run-ms/op")
			b.ReportMetric(ms(start), "start-ms/op")
			b.ReportMetric(float64(run)/float64(cat), "ratio")
			b.ReportMetric(float64(run-start)/float64(cat), "bytes-ratio")
		})
	}
}
