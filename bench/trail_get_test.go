package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/internal/growth"
)

// BenchmarkProcessGetLongTrail times a whole `arca get` process (the
// README's static build) with an empty audit file and with one of 100,000
// events (what a migrate of 100,000 secrets leaves), in turns in one loop,
// and reports their ratio as `100000/0` (docs/performance.md's target:
// 1.1×). Every get appends its event; the file is cut back to its size
// before each run, so every run appends to the same trail. Beside the
// times it reports each side's mean peak RSS, in KiB, as
// `maxrss-KiB@0` and `maxrss-KiB@100000`, and each side's CPU time
// (`cpu-ns/get@…`) and its ratio (`cpu-100000/0`).
func BenchmarkProcessGetLongTrail(b *testing.B) {
	dir := b.TempDir()
	peak := filepath.Join(dir, "peak.go")
	if err := os.WriteFile(peak, []byte(peakSrc), 0o600); err != nil {
		b.Fatal(err)
	}
	arca, peak := goBuild(b, dir, "../cmd/arca"), goBuild(b, dir, peak)
	sizes := []int{0, 100_000}
	sides := make([]trailSide, len(sizes))
	for i, n := range sizes {
		s := trailSide{home: filepath.Join(dir, fmt.Sprint(n))}
		if err := os.MkdirAll(s.home, 0o700); err != nil {
			b.Fatal(err)
		}
		runIn(b, s.home, "", arca, "init")
		runIn(b, s.home, "postgres://app@db/prod", arca, "put", "arca://app/db")
		s.log = filepath.Join(s.home, ".local/state/arca/audit.log")
		s.size = writeTrail(b, s.log, n)
		sides[i] = s
	}
	// A child's peak RSS counts this process's until it execs: keep it small.
	debug.FreeOSMemory()
	syscall.Sync()
	size := func(i int) growth.Size {
		s := &sides[i]
		return growth.Size{Name: fmt.Sprint(sizes[i]), Op: func() {
			if err := os.Truncate(s.log, s.size); err != nil {
				b.Fatal(err)
			}
			cmd := runIn(b, s.home, "", arca, "get", "arca://app/db")
			s.cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		}}
	}
	growth.Measure(b, "get", 1, size(0), size(1))
	// The CPU time (user and system) of each side's gets, which the other
	// work of a shared machine disturbs less than the wall time.
	for i, s := range sides {
		b.ReportMetric(float64(s.cpu.Nanoseconds())/float64(b.N), fmt.Sprintf("cpu-ns/get@%d", sizes[i]))
	}
	b.ReportMetric(float64(sides[1].cpu)/float64(sides[0].cpu), "cpu-100000/0")
	// The peak RSS of each side's get, through peak (see peakSrc), after
	// the timed loop: 20 runs of each, in turns, their mean.
	const runs = 20
	var rss [2]int64
	for range runs {
		for i := range sides {
			if err := os.Truncate(sides[i].log, sides[i].size); err != nil {
				b.Fatal(err)
			}
			out := output(runIn(b, sides[i].home, "", peak, arca, "get", "arca://app/db"))
			kib, err := strconv.ParseInt(strings.TrimSpace(out[strings.LastIndexByte(strings.TrimSpace(out), '\n')+1:]), 10, 64)
			if err != nil {
				b.Fatalf("peak printed %q: %v", out, err)
			}
			rss[i] += kib
		}
	}
	for i := range sides {
		b.ReportMetric(float64(rss[i])/runs, fmt.Sprintf("maxrss-KiB@%d", sizes[i]))
	}
}

// peakSrc is a program that runs its arguments as a command and prints the
// command's peak RSS in KiB after its output. A child's peak RSS counts its
// parent's until it execs (Go starts a child with vfork): a benchmark's
// own children would report the benchmark's size, this small program's
// report their own.
const peakSrc = `package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
)

func main() {
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
	if runtime.GOOS == "darwin" {
		rss /= 1024 // bytes there, KiB on Linux
	}
	fmt.Printf("\n%d\n", rss)
}
`

// goBuild builds the program at src (a package directory or a file) into
// dir, static as the README builds arca, and returns its path.
func goBuild(tb testing.TB, dir, src string) string {
	out := filepath.Join(dir, strings.TrimSuffix(filepath.Base(src), ".go"))
	cmd := exec.Command("go", "build", "-o", out, src)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("go build %s: %v\n%s", src, err, msg)
	}
	return out
}

// trailSide is one side of BenchmarkProcessGetLongTrail: a home with a
// vault and an audit file of size bytes, and the CPU time its gets took.
type trailSide struct {
	home, log string
	size      int64
	cpu       time.Duration
}

// writeTrail writes path as an audit file of n events as the CLI writes
// them, the put events of a migrate, one chain, and returns its size.
func writeTrail(tb testing.TB, path string, n int) int64 {
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	buf := bufio.NewWriter(f)
	clock := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	w := audit.NewWriter(buf, audit.SourceCLI, func() time.Time { clock = clock.Add(time.Millisecond); return clock })
	for i := range n {
		if err := w.Write(audit.Event{Event: "put", Op: "put", Outcome: audit.OK, Env: "default", Ref: fmt.Sprintf("app/secret-%06d", i), Version: 1}); err != nil {
			tb.Fatal(err)
		}
	}
	if err := buf.Flush(); err != nil {
		tb.Fatal(err)
	}
	fi, err := f.Stat()
	if err != nil {
		tb.Fatal(err)
	}
	return fi.Size()
}

// runIn runs a command with HOME home and stdin, failing unless it exits
// 0; it returns the command run, its output in Stdout.
func runIn(tb testing.TB, home, stdin string, args ...string) *exec.Cmd {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = []string{"HOME=" + home}
	cmd.Dir = home
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		tb.Fatalf("%s: %v\n%s", args, err, out.Bytes())
	}
	return cmd
}

// output is what a command runIn ran printed.
func output(cmd *exec.Cmd) string { return cmd.Stdout.(*bytes.Buffer).String() }
