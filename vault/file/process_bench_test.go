package file

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/arca-secrets/arca/internal/growth"
)

// BenchmarkProcessGet times a whole `arca get` process, as a person or a
// script runs it: start, config, identity, vault read, age unwrap, the
// audit append, exit. It runs the binary the README builds (static,
// CGO_ENABLED=0) and the same build with cgo (dynamically linked to the C
// library, as `go build` makes it where a C compiler is installed), side by
// side. The floors: `arca version` (a process that does none of that) and a
// static hello-world Go program. ARCA_BENCH_BASELINE, when set, names
// another arca binary (one built from an older tree, say) whose gets run
// beside these, as "baseline".
func BenchmarkProcessGet(b *testing.B) {
	dir := b.TempDir()
	hello := filepath.Join(dir, "hello.go")
	if err := os.WriteFile(hello, []byte("package main\n\nfunc main() { println(\"hello\") }\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	bins := []struct{ name, cgo, src string }{
		{"hello", "0", hello},
		{"static", "0", "../../cmd/arca"},
		{"dynamic", "1", "../../cmd/arca"},
	}
	for i, bin := range bins {
		out := filepath.Join(dir, bin.name)
		cmd := exec.Command("go", "build", "-o", out, bin.src)
		cmd.Env = append(os.Environ(), "CGO_ENABLED="+bin.cgo)
		if msg, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("go build %s (CGO_ENABLED=%s): %v\n%s", bin.src, bin.cgo, err, msg)
		}
		bins[i].src = out
	}
	if base := os.Getenv("ARCA_BENCH_BASELINE"); base != "" {
		bins = append(bins, struct{ name, cgo, src string }{"baseline", "", base})
	}
	// Every fixture is built, installed, closed and on disk before the
	// first process runs: the benchmark's own memory and writeback are the
	// same for every size.
	sizes := []int{10, 10_000, 100_000}
	homes, refs := make([]string, len(sizes)), make([]string, len(sizes))
	for i, n := range sizes {
		f, names := benchVault(b, n)
		homes[i], refs[i] = b.TempDir(), "arca://"+names[n/2]
		install(b, f.path, filepath.Join(homes[i], ".local/share/arca/default.vault"))
		install(b, f.idPath, filepath.Join(homes[i], ".config/arca/identity.txt"))
		f.Close()
	}
	runtime.GC()
	syscall.Sync()
	b.Run("hello", func(b *testing.B) { runProcess(b, dir, -1, bins[0].src) })
	for _, bin := range bins[1:] {
		b.Run("version/"+bin.name, func(b *testing.B) { runProcess(b, dir, -1, bin.src, "version") })
	}
	for _, bin := range bins[1:] {
		for i, n := range sizes {
			b.Run(fmt.Sprintf("get/%s/records=%d", bin.name, n), func(b *testing.B) {
				runProcess(b, homes[i], 32, bin.src, "get", refs[i])
			})
		}
	}
	// "Reads that do not grow": the README's build at 10 and at 100,000
	// records, in turns, and the ratio (docs/performance.md's target: 1.2×).
	b.Run("get/static/growth", func(b *testing.B) {
		size := func(i int) growth.Size {
			return growth.Size{Name: strconv.Itoa(sizes[i]), Op: func() { runOnce(b, homes[i], 32, bins[1].src, "get", refs[i]) }}
		}
		growth.Measure(b, "get", 1, size(0), size(len(sizes)-1))
	})
}

// runProcess runs the command args b.N times with HOME (and the working
// directory) home and nothing else in its environment, failing unless it
// exits 0 and, when want >= 0, prints want bytes. Beside the wall time it
// reports the CPU time (user and system) a process takes, which the other
// work of a shared machine disturbs less.
func runProcess(b *testing.B, home string, want int, args ...string) {
	var cpu time.Duration
	for range b.N {
		cpu += runOnce(b, home, want, args...)
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// runOnce is one run of runProcess; it returns the CPU time the process took.
func runOnce(b *testing.B, home string, want int, args ...string) time.Duration {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = []string{"HOME=" + home}
	cmd.Dir = home
	out, err := cmd.CombinedOutput()
	if err != nil || want >= 0 && len(out) != want {
		b.Fatalf("%s: %v (%d bytes out)", args, err, len(out))
	}
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// install copies src to dst, making dst's directory 0700 and dst 0600.
func install(b *testing.B, src, dst string) {
	b.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o600); err != nil {
		b.Fatal(err)
	}
}
