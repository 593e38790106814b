package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/arca-secrets/arca/bench/rig"
	"github.com/arca-secrets/arca/vault/etcd/etcdtest/launch"
)

// printReport prints the run's settings, the machine, one line per
// measurement and the ratios against the targets.
func printReport(w io.Writer, o options, rs []result) {
	fmt.Fprintf(w, "arca scale-out: 3 etcd members on loopback (%s), each measurement %v, vault timeout_ms %d, no PDP\n",
		etcdVersion(), o.duration, o.timeout.Milliseconds())
	fmt.Fprintf(w, "machine: %d CPUs, %s, %s %s/%s, load average %s\n\n",
		runtime.NumCPU(), rig.CPUModel(), runtime.Version(), runtime.GOOS, runtime.GOARCH, loadAverage())
	printTable(w, rs)
	fmt.Fprintln(w)
	printRatios(w, o, rs)
}

// printTable prints one line per measurement.
func printTable(w io.Writer, rs []result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "who\tload\tK\tD\tops/s\tp50\tp99\tok\tnot ok\tlate\tunanswered\tetcd CPU / 1,000 ok\tserve CPU / ok\t")
	for _, r := range rs {
		who := "arca serve"
		if r.m.bare {
			who = "bare client"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.0f\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t\n", who, r.m.load, r.m.lanes, r.m.depth,
			r.rate(), ms(r.percentile(50)), ms(r.percentile(99)), r.ok, r.failed(), r.late, r.unanswered, etcdPer1000(r), servePerOp(r))
	}
	tw.Flush()
	fmt.Fprintf(w, `
K: sessions (bare: clients) at once; D: requests in flight in each. ops/s: ok
answers that came within the measurement, per second; p50, p99: from a
request's line written to its answer read, answers after the end included;
late: answered more than timeout_ms after it was sent; unanswered: no answer
by timeout_ms and %v after the end (then the session is stopped). CPU: etcd's
three members from the start to the last session's end; serve's, per ok
answer, its start-up included.
`, drainGrace)
}

// printRatios prints the figures the targets name, from this run: hi is
// the most sessions measured (16 by default), lo the fewest (1), d the
// most requests in flight (64).
func printRatios(w io.Writer, o options, rs []result) {
	hi, lo, d := slices.Max(o.sessions), slices.Min(o.sessions), slices.Max(o.depths)
	find := func(bare bool, l load, lanes, depth int) (result, bool) {
		i := slices.IndexFunc(rs, func(r result) bool { return r.m == measurement{bare, l, lanes, depth} })
		if i < 0 {
			return result{}, false
		}
		return rs[i], true
	}
	ratio := func(what string, target float64, num, den result, okNum, okDen bool) {
		if !okNum || !okDen {
			fmt.Fprintf(w, "%s: not measured in this run\n", what)
			return
		}
		fmt.Fprintf(w, "%s: %.0f/s / %.0f/s = %s (target >= %.1fx): %s\n",
			what, num.rate(), den.rate(), times(num.rate(), den.rate()), target, verdict(num.rate() >= target*den.rate()))
	}
	own, ok1 := find(false, putOwn, hi, d)
	bare, ok2 := find(true, putOwn, hi, 1)
	ratio(fmt.Sprintf("%d sessions putting their own records (%d in flight) / bare, one put in flight per client, %d clients", hi, d, hi), 0.5, own, bare, ok1, ok2)
	if hi > lo {
		one, ok3 := find(false, putOwn, lo, d)
		ratio(fmt.Sprintf("%d sessions putting their own records / %d (%d in flight)", hi, lo, d), 3, own, one, ok1, ok3)
	}
	if sh, ok := find(false, putShared, hi, d); ok {
		fmt.Fprintf(w, "%d sessions putting one shared record (%d in flight): %d sent, %d answered ok, %d not ok, %d late, %d unanswered; p99 %s (target: all answered, none past the deadline): %s\n",
			hi, d, sh.sent, sh.ok, sh.failed(), sh.late, sh.unanswered, ms(sh.percentile(99)), verdict(sh.errors() == 0 && sh.ok > 0))
	}
	get, ok4 := find(false, getSeeded, lo, d)
	bareGet, ok5 := find(true, getSeeded, lo, d)
	ratio(fmt.Sprintf("%d session(s) with %d gets in flight / bare, %d client(s) with %d in flight", lo, d, lo, d), 0.6, get, bareGet, ok4, ok5)
	if getHi, ok := find(false, getSeeded, hi, d); ok && ok4 && hi > lo && get.rate() > 0 {
		fmt.Fprintf(w, "%d sessions' gets / %d (%d in flight): %s (no target)\n", hi, lo, d, times(getHi.rate(), get.rate()))
	}
}

// printErrors says, loudly, which measurements had errors and what the
// first of each was; it returns how many had any.
func printErrors(w io.Writer, rs []result) int {
	n := 0
	for _, r := range rs {
		if r.errors() == 0 {
			continue
		}
		n++
		fmt.Fprintf(w, "scale: ERRORS in %s: %d not ok, %d late, %d unanswered, of %d sent; first: %s\n",
			r.m, r.failed(), r.late, r.unanswered, r.sent, r.firstErr)
		for _, c := range r.codes() {
			fmt.Fprintf(w, "scale:   %d %s, the first: %s\n", r.notOK[c], c, r.firstOf[c])
		}
	}
	return n
}

// verdict says whether a target is met.
func verdict(met bool) string {
	if met {
		return "met"
	}
	return "NOT MET"
}

// times is num/den as a ratio, or "-" when den is 0.
func times(num, den float64) string {
	if den == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", num/den)
}

// etcdPer1000 is the members' CPU time per 1,000 ok answers.
func etcdPer1000(r result) string {
	if r.etcdCPU < 0 || r.ok == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f s", r.etcdCPU.Seconds()*1000/float64(r.ok))
}

// servePerOp is the sessions' CPU time per ok answer.
func servePerOp(r result) string {
	if r.m.bare || r.ok == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f ms", float64((r.serveCPU/time.Duration(r.ok)).Nanoseconds())/1e6)
}

// ms formats d in milliseconds.
func ms(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000)
}

// etcdVersion is the first line the members' etcd --version prints.
func etcdVersion() string {
	bin, err := launch.LookBinary()
	if err != nil {
		return "etcd, version unknown"
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return "etcd, version unknown"
	}
	first, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSpace(first)
}

// loadAverage is the machine's 1, 5 and 15 minute load averages.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}
