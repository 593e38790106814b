// Command trail times arca audit verify, the real binary as a user runs
// it, over an audit file of n events written as the CLI writes them:
//
//	go build -o arca ./cmd/arca
//	go run ./bench/trail -arca ./arca -n 1000000 -runs 3
//
// It prints the median wall time of the runs and the file's size.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/arca-secrets/arca/audit"
)

func main() {
	bin := flag.String("arca", "", "the arca binary to time (required)")
	n := flag.Int("n", 1_000_000, "events in the trail")
	runs := flag.Int("runs", 3, "runs of arca audit verify (the median is reported)")
	flag.Parse()
	if *bin == "" || *n < 1 || *runs < 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*bin, *n, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "trail:", err)
		os.Exit(1)
	}
}

func run(bin string, n, runs int) error {
	dir, err := os.MkdirTemp("", "arca-trail-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "audit.log")
	size, err := writeTrail(path, n)
	if err != nil {
		return err
	}
	var walls []time.Duration
	for range runs {
		cmd := exec.Command(bin, "audit", "verify", path)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
		start := time.Now()
		out, err := cmd.Output()
		walls = append(walls, time.Since(start))
		if err != nil {
			return fmt.Errorf("arca audit verify: %v: %s", err, out)
		}
	}
	slices.Sort(walls)
	fmt.Printf("arca audit verify: %d events, %.1f MB, %d runs, median %.3f s (fastest %.3f s, slowest %.3f s)\n",
		n, float64(size)/1e6, runs, walls[len(walls)/2].Seconds(), walls[0].Seconds(), walls[len(walls)-1].Seconds())
	return nil
}

// writeTrail writes n events to path as the CLI writes them: gets, puts
// and denials of varied refs and actors, one chain.
func writeTrail(path string, n int) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	clock := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	w := audit.NewWriter(bw, audit.SourceCLI, func() time.Time { clock = clock.Add(time.Millisecond); return clock })
	for i := range n {
		e := audit.Event{Event: "get", Op: "get", Outcome: audit.OK, Env: "prod", Ref: fmt.Sprintf("app/secret-%05d", i%50000), Actor: "agent-7", Version: 3}
		switch i % 10 {
		case 3:
			e = audit.Event{Event: "put", Op: "put", Outcome: audit.OK, Env: "prod", Ref: fmt.Sprintf("app/secret-%05d", i%50000), Version: 4}
		case 7:
			e = audit.Event{Event: "denied", Op: "get", Outcome: audit.Denied, Env: "prod", Ref: "billing/card", Actor: "agent-9",
				Code: "denied", Message: "denied by policy: agents may not read billing", Policy: &audit.Policy{Reason: "agents may not read billing"}}
		}
		if err := w.Write(e); err != nil {
			return 0, err
		}
	}
	if err := bw.Flush(); err != nil {
		return 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}
