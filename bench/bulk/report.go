package main

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/arca-secrets/arca/bench/rig"
)

// row is one line of the table: one verb, over its runs.
type row struct {
	what   string
	n      int   // secrets; 0 for the baseline
	input  int64 // bytes the verb reads: the dotenv file, the vault, the backup
	output int64 // bytes of the vault a migrate wrote; 0 when not measured
	walls  []time.Duration
	rssKiB int64 // the highest of the runs
	peer   bool  // the peer's, which arca's baselines do not apply to
	etcd   bool  // into an etcd vault: over the etcd baseline
	// baseline says which baseline the row is, if one.
	baseline baselineKind
}

// baselineKind tells the two baselines apart.
type baselineKind int

const (
	notBaseline  baselineKind = iota
	idleBaseline              // arca list as it is: its collector never runs
	gcBaseline                // arca list with its collector run
	etcdBaseline              // arca list of an etcd vault, collector run
)

// add records one run.
func (r *row) add(s sample) {
	r.walls = append(r.walls, s.wall)
	r.rssKiB = max(r.rssKiB, s.rssKiB)
}

// median is the median wall time of r's runs.
func (r row) median() time.Duration {
	w := slices.Sorted(slices.Values(r.walls))
	if len(w) == 0 {
		return 0
	}
	if len(w)%2 == 1 {
		return w[len(w)/2]
	}
	return (w[len(w)/2-1] + w[len(w)/2]) / 2
}

// rssRatio is peak RSS over input size, less base KiB of RSS first (0 for
// the raw ratio).
func (r row) rssRatio(baseKiB int64) float64 {
	if r.input == 0 {
		return 0
	}
	return float64((r.rssKiB-baseKiB)*1024) / float64(r.input)
}

// printReport prints the machine, the table and the ratios against the
// targets.
func printReport(w io.Writer, o options, in input, rows []row) {
	fmt.Fprintf(w, "arca bulk verbs: %d secrets, dotenv input %s (%d bytes), %d run(s) of each arca verb\n",
		o.n, kib(in.size), in.size, o.runs)
	fmt.Fprintf(w, "machine: %d CPUs, %s, %s %s/%s\n\n", runtime.NumCPU(), rig.CPUModel(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	printTable(w, rows)
	fmt.Fprintln(w)
	printRatios(w, rows)
}

// printTable prints one line per row.
func printTable(w io.Writer, rows []row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "what\tn\tinput\truns\tmedian wall\tpeak RSS\tRSS/input (over the baselines)\t")
	idle, gc := baseline(rows, idleBaseline), baseline(rows, gcBaseline)
	for _, r := range rows {
		ratio := "-"
		if r.input > 0 {
			ratio = fmt.Sprintf("%.1fx", r.rssRatio(0))
			switch e := baseline(rows, etcdBaseline); {
			case r.etcd && e > 0:
				ratio += fmt.Sprintf(" (%.1fx over the etcd baseline)", r.rssRatio(e))
			case idle > 0 && gc > 0 && !r.peer && !r.etcd:
				ratio += fmt.Sprintf(" (%.1fx, %.1fx)", r.rssRatio(idle), r.rssRatio(gc))
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%s\t%s\t%s\t\n", r.what, r.n, kib(r.input), len(r.walls),
			seconds(r.median()), mib(r.rssKiB), ratio)
	}
	tw.Flush()
}

// printRatios prints each measured figure that has a target beside it.
func printRatios(w io.Writer, rows []row) {
	get := func(prefix string) (row, bool) {
		i := slices.IndexFunc(rows, func(r row) bool { return strings.HasPrefix(r.what, prefix) })
		if i < 0 {
			return row{}, false
		}
		return rows[i], true
	}
	idle, gc := baseline(rows, idleBaseline), baseline(rows, gcBaseline)
	for _, what := range []string{"arca migrate --from dotenv (file", "arca vault backup", "arca vault restore"} {
		if r, ok := get(what); ok {
			fmt.Fprintf(w, "%s: peak RSS / input %.1fx; above the idle baseline %.1fx, above the collector-run baseline %.1fx (target < 10x)\n",
				r.what, r.rssRatio(0), r.rssRatio(idle), r.rssRatio(gc))
			if r.output > 0 {
				fmt.Fprintf(w, "  (the vault it wrote: %s; peak RSS / vault %.1fx; above the baselines %.1fx, %.1fx)\n",
					kib(r.output), float64(r.rssKiB*1024)/float64(r.output), float64((r.rssKiB-idle)*1024)/float64(r.output), float64((r.rssKiB-gc)*1024)/float64(r.output))
			}
		}
	}
	if r, ok := get("arca migrate --from dotenv (etcd"); ok {
		fmt.Fprintf(w, "%s: median %s (target <= 5 s); peak RSS above the etcd baseline / input %.1fx (target < 10x)\n",
			r.what, seconds(r.median()), r.rssRatio(baseline(rows, etcdBaseline)))
	}
	mig, ok1 := get("arca migrate --from dotenv (file")
	peer, ok2 := get("arenzana/arca import")
	if ok1 && ok2 && mig.median() > 0 {
		fmt.Fprintf(w, "peer import / arca migrate (file vault): %s / %s = %.0fx (target >= 100x)\n",
			seconds(peer.median()), seconds(mig.median()), float64(peer.median())/float64(mig.median()))
	}
}

// baseline is the peak RSS of the baseline row of kind k, or 0 if there
// is none.
func baseline(rows []row, k baselineKind) int64 {
	for _, r := range rows {
		if r.baseline == k {
			return r.rssKiB
		}
	}
	return 0
}

// seconds formats d in seconds, to the millisecond.
func seconds(d time.Duration) string { return fmt.Sprintf("%.3f s", d.Seconds()) }

// kib formats a byte count in KiB.
func kib(b int64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f KiB", float64(b)/1024)
}

// mib formats a KiB count in MiB.
func mib(k int64) string { return fmt.Sprintf("%.1f MiB", float64(k)/1024) }
