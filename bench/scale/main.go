// Command scale measures a shared vault (kind etcd) as a team uses it: K
// arca serve sessions at once, each a child process of the built binary,
// on a three-member loopback etcd cluster it starts (package launch, as
// the tests start theirs), beside a bare etcd client on the same cluster
// in the same run. One command re-measures every figure of the scale-out
// targets in docs/performance.md:
//
//	go build -o arca ./cmd/arca
//	go run ./bench/scale -arca ./arca [-sessions 1,4,16] [-depths 64,1] [-loads own,shared,get] [-duration 10s]
//
// For each session count K of -sessions it runs, in this order, each for
// -duration: the bare client's puts, K clients with one put in flight
// each, and K sessions putting records of their own (each session its own
// names) (-loads own); K sessions putting one record they share (shared);
// the bare client's gets, K clients with D in flight, and K sessions
// getting records put before the run (get). Every measurement but the
// bare puts is made with D requests in flight in each session for every D
// of -depths (64: pipelined; 1: lockstep). The sessions start afresh for
// every measurement, each answering one get before the clock starts; no
// PDP is configured, so serve consults none.
//
// Every answer is checked: "ok":true, the id of the request it answers (in
// request order), and a get's value. An answer that is not ok, comes later
// than the vault's deadline (-timeout, its timeout_ms) after its request was
// sent, or never comes is an error; a run with errors says so on stderr and
// exits 1 unless -allow-errors. The table and the ratios against the targets
// are printed on stdout, meant to be pasted into docs/performance.md.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/arca-secrets/arca/vault/etcd/etcdtest/launch"
)

// options are the command line.
type options struct {
	arca        string        // the arca binary
	sessions    []int         // session counts, each measured in turn
	depths      []int         // requests in flight per session
	loads       []load        // what the requests do
	duration    time.Duration // of each measurement
	timeout     time.Duration // the vault's timeout_ms: its deadline for one op
	allowErrors bool          // exit 0 even when answers failed
	keep        bool          // keep the temp dir
}

// parseFlags reads args (without the program's name) into options.
func parseFlags(fs *flag.FlagSet, args []string) (options, error) {
	o := options{sessions: []int{1, 4, 16}, depths: []int{64, 1}, loads: loads()}
	fs.StringVar(&o.arca, "arca", "", "the arca binary to measure (required)")
	fs.Var((*intList)(&o.sessions), "sessions", "arca serve sessions at once, one measurement each (comma-separated)")
	fs.Var((*intList)(&o.depths), "depths", "requests in flight per session, one measurement each (comma-separated)")
	fs.Var((*loadList)(&o.loads), "loads", "what the requests do, one measurement each: own (puts, each session its own records; with the bare client's puts), shared (puts of one record), get (with the bare client's gets)")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "how long each measurement sends requests")
	fs.DurationVar(&o.timeout, "timeout", 5*time.Second, "the vault's timeout_ms (whole milliseconds): an answer later than this is an error")
	fs.BoolVar(&o.allowErrors, "allow-errors", false, "exit 0 even when some answers failed (they are still reported)")
	fs.BoolVar(&o.keep, "keep", false, "keep the temp dir: etcd's logs, arca's home (its path is printed on stderr)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case o.arca == "":
		return o, fmt.Errorf("-arca is required: go build -o arca ./cmd/arca first")
	case fs.NArg() > 0:
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case o.duration <= 0:
		return o, fmt.Errorf("-duration %v, want more than 0", o.duration)
	case o.timeout < time.Millisecond || o.timeout > 600*time.Second || o.timeout%time.Millisecond != 0:
		return o, fmt.Errorf("-timeout %v, want whole milliseconds from 1ms to 10m (the vault's timeout_ms)", o.timeout)
	}
	return o, nil
}

func main() {
	fs := flag.NewFlagSet("scale", flag.ContinueOnError)
	o, err := parseFlags(fs, os.Args[1:])
	if err != nil {
		if err != flag.ErrHelp {
			fmt.Fprintln(os.Stderr, "scale:", err)
		}
		os.Exit(2)
	}
	results, err := run(o, os.Stdout)
	failed := printErrors(os.Stderr, results)
	if err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
	if failed > 0 && !o.allowErrors {
		fmt.Fprintf(os.Stderr, "scale: %d measurement(s) had errors (above); -allow-errors to exit 0 all the same\n", failed)
		os.Exit(1)
	}
}

// run starts the cluster in a new temp dir, does every measurement of o's
// plan and prints the report on w. It returns the results, those measured
// before a failure to measure (err) among them.
func run(o options, w io.Writer) (results []result, err error) {
	if o.arca, err = filepath.Abs(o.arca); err != nil {
		return nil, err
	}
	root, err := os.MkdirTemp("", "arca-scale-")
	if err != nil {
		return nil, err
	}
	if o.keep {
		progress("temp dir %s (kept)", root)
	} else {
		defer os.RemoveAll(root)
	}
	progress("starting a 3-member etcd cluster")
	bin, err := launch.LookBinary()
	if err != nil {
		return nil, err
	}
	env, err := setUp(o, root, bin)
	if env != nil {
		defer env.tearDown()
	}
	if err != nil {
		return nil, err
	}
	defer func() { printReport(w, o, results) }()
	for _, m := range plan(o.sessions, o.depths, o.loads) {
		progress("%s for %v", m, o.duration)
		r, err := env.measure(m)
		if err != nil {
			return results, fmt.Errorf("%s: %w", m, err)
		}
		results = append(results, r)
	}
	return results, nil
}

// progress reports what is being done on stderr, away from the report.
func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "scale: "+format+"\n", args...)
}
