// Command trail times arca audit verify, the real binary as a user runs
// it, over an audit file of n events written as the CLI writes them:
//
//	go build -o arca ./cmd/arca
//	go run ./bench/trail -arca ./arca -n 1000000 -runs 3
//
// It prints the median wall time of the runs and the file's size.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/arca-secrets/arca/bench/synth"
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
	size, err := synth.WriteTrail(path, n)
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
