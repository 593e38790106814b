// Command bulk times arca's bulk verbs on the built binary: migrate of a
// dotenv file of n secrets into a file vault (and, with -etcd, into a vault
// on a three-member loopback etcd cluster), vault backup of the result, and
// vault restore of that backup into an empty vault. With -peer it also times
// the import of the same secrets by the closest peer, arenzana/arca, in its
// own fresh store.
//
// It is run by hand, not by the tests:
//
//	go build -o /tmp/arca-bench ./cmd/arca
//	go run ./bench/bulk -arca /tmp/arca-bench [-peer PATH] [-n 10000] [-etcd] [-runs 3]
//
// Every arca run gets a fresh HOME and an environment of PATH, HOME and
// LANG=C.UTF-8 only, so nothing on the machine points it at a real vault.
// Wall time is measured around the child process; peak RSS is the child's
// (getrusage's ru_maxrss, KiB on Linux). The table it prints is plain text,
// meant to be pasted into docs/performance.md.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

// The namespace the secrets are migrated into.
const ns = "bulk"

// options are the command line.
type options struct {
	arca string // the arca binary
	peer string // the peer's binary; "" skips it
	n    int    // secrets in the input
	runs int    // runs of each arca verb; the median is reported
	etcd bool   // also migrate into an etcd vault
	keep bool   // keep the temp dir
}

// parseFlags reads the command line into options.
func parseFlags() options {
	var o options
	flag.StringVar(&o.arca, "arca", "", "the arca binary to time (required)")
	flag.StringVar(&o.peer, "peer", "", "the arenzana/arca binary to time beside it (optional)")
	flag.IntVar(&o.n, "n", 10000, "secrets in the input")
	flag.IntVar(&o.runs, "runs", 3, "runs of each arca verb (the median wall time is reported)")
	flag.BoolVar(&o.etcd, "etcd", false, "also migrate into a vault on a 3-member loopback etcd cluster ("+etcdBinary+")")
	flag.BoolVar(&o.keep, "keep", false, "keep the temp dir (its path is printed on stderr)")
	flag.Parse()
	return o
}

func main() {
	o := parseFlags()
	if o.arca == "" || o.n < 1 || o.runs < 1 || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bulk:", err)
		os.Exit(1)
	}
}

// run does every measurement o asks for in a new temp dir and prints the
// table on w.
func run(o options, w io.Writer) error {
	var err error
	if o.arca, err = filepath.Abs(o.arca); err != nil {
		return err
	}
	if o.peer != "" {
		if o.peer, err = filepath.Abs(o.peer); err != nil {
			return err
		}
	}
	root, err := os.MkdirTemp("", "arca-bulk-")
	if err != nil {
		return err
	}
	if o.keep {
		progress("temp dir %s (kept)", root)
	} else {
		defer os.RemoveAll(root)
	}
	in, err := writeInput(root, o.n)
	if err != nil {
		return err
	}
	rows, err := measureAll(o, root, in)
	printReport(w, o, in, rows)
	return err
}

// measureAll runs each measurement in turn. It returns the rows measured
// so far with the first error, so a failure late on still prints the rest.
func measureAll(o options, root string, in input) ([]row, error) {
	var rows []row
	fileRows, err := benchFileVault(o, root, in)
	rows = append(rows, fileRows...)
	if err != nil {
		return rows, err
	}
	if o.etcd {
		r, err := benchEtcd(o, root, in)
		if err != nil {
			return rows, fmt.Errorf("etcd: %w", err)
		}
		rows = append(rows, r)
	}
	if o.peer != "" {
		r, err := benchPeer(o, root, in)
		if err != nil {
			return rows, fmt.Errorf("peer: %w", err)
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// progress reports what is being done on stderr, away from the table.
func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bulk: "+format+"\n", args...)
}

// ---- the input ----

// input is the dotenv file every tool reads, and what it holds.
type input struct {
	path   string
	size   int64
	values []string // values[i] is the value of name(i)
}

// name is the name of the i-th secret: KEY_00001 for i = 0.
func name(i int) string { return fmt.Sprintf("KEY_%05d", i+1) }

// writeInput writes a dotenv file of n secrets in dir.
func writeInput(dir string, n int) (input, error) {
	in := input{path: filepath.Join(dir, "secrets.env"), values: values(n)}
	var b bytes.Buffer
	b.WriteString("# " + strconv.Itoa(n) + " secrets for arca's bulk benchmark\n")
	for i, v := range in.values {
		b.WriteString(dotenvLine(name(i), v))
	}
	if err := os.WriteFile(in.path, b.Bytes(), 0o600); err != nil {
		return in, err
	}
	in.size = int64(b.Len())
	return in, nil
}

// valueChars are the characters values are made of: printable ASCII but
// for the quotes, the backslash, '$', '#' and '`', which dotenv readers
// treat differently from one another (escapes, expansion, comments).
const valueChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789" +
	"    -_.,:;/+=@%!?()[]{}<>~^&*|"

// values returns n values of about 40 bytes of varied printable text, the
// same on every run. Some hold spaces at both ends, some double quotes,
// some a single quote; dotenvLine quotes each so that it reads back as is.
func values(n int) []string {
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	out := make([]string, n)
	for i := range out {
		b := make([]byte, 34+rng.IntN(13))
		for j := range b {
			b[j] = valueChars[rng.IntN(len(valueChars))]
		}
		v := string(b)
		switch i % 10 {
		case 3:
			v = v[:10] + `"quoted"` + v[18:]
		case 6:
			v = v[:10] + "it's" + v[14:]
		case 9:
			v = "  " + v[2:len(v)-2] + "  "
		}
		out[i] = v
	}
	return out
}

// dotenvLine is one KEY="value" line. A value holding a double quote is
// single-quoted instead, so that it needs no escape: the readers agree on
// a quoted value without escapes, not on escapes.
func dotenvLine(key, v string) string {
	if strings.Contains(v, `"`) {
		return key + "='" + v + "'\n"
	}
	return key + `="` + v + "\"\n"
}

// ---- running and measuring a child ----

// sample is one run of a child process.
type sample struct {
	wall   time.Duration
	rssKiB int64 // peak resident set size
	stdout []byte
	stderr []byte
}

// measure runs cmd to its end and reports its wall time and peak RSS. A
// failed run is an error that holds the child's stderr.
func measure(cmd *exec.Cmd) (sample, error) {
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	s := sample{wall: time.Since(start), stdout: out.Bytes(), stderr: errb.Bytes()}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru != nil {
		s.rssKiB = ru.Maxrss // KiB on Linux, where the figures are taken (bytes on macOS)
	}
	if err != nil {
		return s, fmt.Errorf("%s: %w\n%s%s", strings.Join(cmd.Args, " "), err, errb.Bytes(), tail(out.Bytes()))
	}
	return s, nil
}

// tail is the last few lines of b, for error messages.
func tail(b []byte) []byte {
	lines := bytes.SplitAfter(b, []byte("\n"))
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return bytes.Join(lines, nil)
}

// ---- arca ----

// home is one fresh arca user: a HOME of its own under the temp dir.
type home struct {
	bin string
	dir string
}

// newHome makes the directory of a new home called label under root.
func newHome(bin, root, label string) (home, error) {
	h := home{bin: bin, dir: filepath.Join(root, label)}
	return h, os.MkdirAll(h.dir, 0o700)
}

// env is the whole environment arca gets: no XDG_* or ARCA_* variables, so
// every path is the default under HOME.
func (h home) env() []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + h.dir, "LANG=C.UTF-8"}
}

// cmd is arca with args in h, run in h's directory (so that no arca.toml
// in the caller's working directory is read).
func (h home) cmd(args ...string) *exec.Cmd {
	cmd := exec.Command(h.bin, args...)
	cmd.Env, cmd.Dir = h.env(), h.dir
	return cmd
}

// run runs arca with args in h and measures it.
func (h home) run(args ...string) (sample, error) { return measure(h.cmd(args...)) }

// identity is where arca keeps the default identity (docs/config.md).
func (h home) identity() string { return filepath.Join(h.dir, ".config", "arca", "identity.txt") }

// vaultFile is where arca keeps the default env's file vault.
func (h home) vaultFile() string {
	return filepath.Join(h.dir, ".local", "share", "arca", "default.vault")
}

// config writes toml as h's user config.
func (h home) config(toml string) error {
	p := filepath.Join(h.dir, ".config", "arca", "arca.toml")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(toml), 0o600)
}

// initHome makes a new home under root and runs arca init in it, after
// setup (which may write a config or an identity) when it is not nil.
func initHome(bin, root, label string, setup func(home) error) (home, error) {
	h, err := newHome(bin, root, label)
	if err != nil {
		return h, err
	}
	if setup != nil {
		if err := setup(h); err != nil {
			return h, err
		}
	}
	_, err = h.run("init")
	return h, err
}

// counted matches the summary line arca's bulk verbs print on stderr.
var counted = regexp.MustCompile(`(\d+) created, (\d+) overwritten, (\d+) skipped`)

// checkCreated checks that a bulk verb's summary says it created n
// records, and that it printed one row per record.
func checkCreated(verb string, s sample, n int) error {
	m := counted.FindSubmatch(s.stderr)
	if m == nil {
		return fmt.Errorf("%s: no summary line on stderr:\n%s", verb, s.stderr)
	}
	if string(m[1]) != strconv.Itoa(n) || string(m[2]) != "0" || string(m[3]) != "0" {
		return fmt.Errorf("%s: want %d created, 0 overwritten, 0 skipped; arca said: %s", verb, n, m[0])
	}
	if rows := bytes.Count(s.stdout, []byte("\n")); rows != n {
		return fmt.Errorf("%s: %d rows on stdout, want %d", verb, rows, n)
	}
	return nil
}

// spotChecks are the indexes of the values read back after a write: the
// first and last, and one of each kind values makes.
func spotChecks(n int) []int {
	idx := []int{0, 3, 6, 9, n - 1}
	return slices.DeleteFunc(idx, func(i int) bool { return i >= n })
}

// checkValues reads a few secrets back from h's default env with arca get
// and compares them with the input.
func checkValues(h home, in input) error {
	for _, i := range spotChecks(len(in.values)) {
		s, err := h.run("get", "arca://"+ns+"/"+name(i))
		if err != nil {
			return err
		}
		if got := string(s.stdout); got != in.values[i] {
			return fmt.Errorf("arca get %s: got %q, want %q", name(i), got, in.values[i])
		}
	}
	return nil
}

// migrateArgs are the arguments of the migration every arca run times.
func migrateArgs(in input) []string {
	return []string{"migrate", "--from", "dotenv", "--ns", ns, in.path}
}

// benchFileVault times, on the default file vault: migrate (each run into
// a fresh vault), backup of the last vault migrated into, and restore of
// that backup into a fresh vault opened by the same identity. The first
// row is a baseline: arca list on an empty vault, the least a verb costs.
func benchFileVault(o options, root string, in input) ([]row, error) {
	base, err := benchBaseline(o, root)
	if err != nil {
		return nil, err
	}
	rows := []row{base}
	mig := row{what: "arca migrate --from dotenv (file vault)", n: o.n, input: in.size}
	var last home
	for r := range o.runs {
		progress("migrate %d secrets into a file vault, run %d/%d", o.n, r+1, o.runs)
		if last, err = initHome(o.arca, root, fmt.Sprintf("migrate-%d", r), nil); err != nil {
			return rows, err
		}
		s, err := last.run(migrateArgs(in)...)
		if err == nil {
			err = checkCreated("migrate", s, o.n)
		}
		if err != nil {
			return rows, err
		}
		mig.add(s)
	}
	if mig.output, err = fileSize(last.vaultFile()); err != nil {
		return rows, err
	}
	rows = append(rows, mig)
	if err := checkValues(last, in); err != nil {
		return rows, fmt.Errorf("after migrate: %w", err)
	}
	more, err := benchBackupRestore(o, root, last, in)
	return append(rows, more...), err
}

// benchBaseline times arca list on a fresh, empty file vault.
func benchBaseline(o options, root string) (row, error) {
	r := row{what: "arca list (empty vault: baseline)"}
	for i := range o.runs {
		h, err := initHome(o.arca, root, fmt.Sprintf("baseline-%d", i), nil)
		if err != nil {
			return r, err
		}
		s, err := h.run("list")
		if err != nil {
			return r, err
		}
		r.add(s)
	}
	return r, nil
}

// benchBackupRestore times arca vault backup of src's vault, then arca
// vault restore of that backup into a fresh home that has src's identity
// (the backup is wrapped to the vault's recipients).
func benchBackupRestore(o options, root string, src home, in input) ([]row, error) {
	vaultSize, err := fileSize(src.vaultFile())
	if err != nil {
		return nil, err
	}
	bk := row{what: "arca vault backup (file vault)", n: o.n, input: vaultSize}
	rs := row{what: "arca vault restore (into an empty vault)", n: o.n}
	for r := range o.runs {
		progress("backup and restore %d records, run %d/%d", o.n, r+1, o.runs)
		file := filepath.Join(root, fmt.Sprintf("backup-%d.vault", r))
		s, err := src.run("vault", "backup", file)
		if err != nil {
			return nil, err
		}
		bk.add(s)
		if rs.input, err = fileSize(file); err != nil {
			return nil, fmt.Errorf("vault backup wrote no file: %w", err)
		}
		dst, err := initHome(o.arca, root, fmt.Sprintf("restore-%d", r), withIdentityOf(src))
		if err != nil {
			return nil, err
		}
		s, err = dst.run("vault", "restore", file)
		if err == nil {
			err = checkCreated("vault restore", s, o.n)
		}
		if err != nil {
			return []row{bk}, err
		}
		rs.add(s)
		if r == o.runs-1 {
			if err := checkValues(dst, in); err != nil {
				return []row{bk, rs}, fmt.Errorf("after restore: %w", err)
			}
		}
	}
	return []row{bk, rs}, nil
}

// withIdentityOf is a setup for initHome that copies src's identity into
// the new home, so that its init keeps it rather than making a new one.
func withIdentityOf(src home) func(home) error {
	return func(h home) error {
		b, err := os.ReadFile(src.identity())
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(h.identity()), 0o700); err != nil {
			return err
		}
		return os.WriteFile(h.identity(), b, 0o600)
	}
}

// fileSize is the size of the file at path.
func fileSize(path string) (int64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// benchEtcd times migrate into a vault of kind etcd on a new three-member
// loopback cluster: each run in a fresh home with its own key prefix.
func benchEtcd(o options, root string, in input) (row, error) {
	r := row{what: "arca migrate --from dotenv (etcd vault, 3 members)", n: o.n, input: in.size}
	progress("starting a 3-member etcd cluster")
	c, err := startCluster(filepath.Join(root, "etcd"), 3)
	if err != nil {
		return r, err
	}
	defer c.stop()
	for i := range o.runs {
		progress("migrate %d secrets into an etcd vault, run %d/%d", o.n, i+1, o.runs)
		toml := etcdConfig(c.endpoints(), fmt.Sprintf("/arca-bench/run%d/", i))
		h, err := initHome(o.arca, root, fmt.Sprintf("etcd-%d", i), func(h home) error { return h.config(toml) })
		if err != nil {
			return r, err
		}
		s, err := h.run(migrateArgs(in)...)
		if err == nil {
			err = checkCreated("migrate (etcd)", s, o.n)
		}
		if err != nil {
			return r, err
		}
		r.add(s)
		if i == o.runs-1 {
			if err := checkValues(h, in); err != nil {
				return r, fmt.Errorf("after migrate: %w", err)
			}
		}
	}
	return r, nil
}

// etcdConfig is an arca.toml whose only env, default, is a vault of kind
// etcd under prefix.
func etcdConfig(endpoints []string, prefix string) string {
	quoted := make([]string, len(endpoints))
	for i, e := range endpoints {
		quoted[i] = strconv.Quote(e)
	}
	return fmt.Sprintf(`[envs.default]
vault = "team"

[vaults.team]
kind = "etcd"
endpoints = [%s]
prefix = %q
timeout_ms = 60000
`, strings.Join(quoted, ", "), prefix)
}

// ---- the peer ----

// peerImported matches the summary line of the peer's import.
var peerImported = regexp.MustCompile(`imported (\d+) secret\(s\) \((\d+) new`)

// benchPeer times, once, the peer's import of the same dotenv file on its
// stdin into its own fresh store, after its init.
func benchPeer(o options, root string, in input) (row, error) {
	r := row{what: "arenzana/arca import (dotenv on stdin)", n: o.n, input: in.size, peer: true}
	dir := filepath.Join(root, "peer")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return r, err
	}
	if _, err := measure(peerCmd(o.peer, dir, "init")); err != nil {
		return r, err
	}
	f, err := os.Open(in.path)
	if err != nil {
		return r, err
	}
	defer f.Close()
	progress("peer import of %d secrets (slow)", o.n)
	cmd := peerCmd(o.peer, dir, "import")
	cmd.Stdin = bufio.NewReader(f)
	s, err := measure(cmd)
	if err != nil {
		return r, err
	}
	m := peerImported.FindSubmatch(s.stderr)
	if m == nil || string(m[1]) != strconv.Itoa(o.n) || string(m[2]) != strconv.Itoa(o.n) {
		return r, fmt.Errorf("peer import: want %d imported, all new; it said:\n%s", o.n, tail(s.stderr))
	}
	r.add(s)
	return r, checkPeerValues(o.peer, dir, in)
}

// peerCmd is the peer with args in its store in dir, run non-interactively
// as its own tests run it: every path it uses given by the environment.
func peerCmd(bin, dir string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "LANG=C.UTF-8",
		"ARCA_STORE=" + filepath.Join(dir, "store.json"),
		"ARCA_IDENTITY=" + filepath.Join(dir, "identity.txt"),
		"XDG_CONFIG_HOME=" + filepath.Join(dir, "config"),
		"XDG_STATE_HOME=" + filepath.Join(dir, "state"),
	}
	return cmd
}

// checkPeerValues reads a few secrets back with the peer's get.
func checkPeerValues(bin, dir string, in input) error {
	for _, i := range spotChecks(len(in.values)) {
		s, err := measure(peerCmd(bin, dir, "get", name(i)))
		if err != nil {
			return err
		}
		if got := string(s.stdout); got != in.values[i] {
			return fmt.Errorf("peer get %s: got %q, want %q", name(i), got, in.values[i])
		}
	}
	return nil
}

// ---- the report ----

// row is one line of the table: one verb, over its runs.
type row struct {
	what   string
	n      int   // secrets; 0 for the baseline
	input  int64 // bytes the verb reads: the dotenv file, the vault, the backup
	output int64 // bytes of the vault a migrate wrote; 0 when not measured
	walls  []time.Duration
	rssKiB int64 // the highest of the runs
	peer   bool  // the peer's, which arca's baseline does not apply to
}

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
	fmt.Fprintf(w, "machine: %d CPUs, %s, %s %s/%s\n\n", runtime.NumCPU(), cpuModel(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	printTable(w, rows)
	fmt.Fprintln(w)
	printRatios(w, rows)
}

// printTable prints one line per row.
func printTable(w io.Writer, rows []row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "what\tn\tinput\truns\tmedian wall\tpeak RSS\tRSS/input\t")
	base := baseline(rows)
	for _, r := range rows {
		ratio := "-"
		if r.input > 0 {
			ratio = fmt.Sprintf("%.1fx", r.rssRatio(0))
			if base > 0 && !r.peer {
				ratio += fmt.Sprintf(" (%.1fx over baseline)", r.rssRatio(base))
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
	for _, what := range []string{"arca migrate --from dotenv (file", "arca vault backup", "arca vault restore"} {
		if r, ok := get(what); ok {
			fmt.Fprintf(w, "%s: peak RSS / input %.1fx, above baseline %.1fx (target < 10x)\n",
				r.what, r.rssRatio(0), r.rssRatio(baseline(rows)))
			if r.output > 0 {
				fmt.Fprintf(w, "  (the vault it wrote: %s; peak RSS / vault %.1fx, above baseline %.1fx)\n",
					kib(r.output), float64(r.rssKiB*1024)/float64(r.output), float64((r.rssKiB-baseline(rows))*1024)/float64(r.output))
			}
		}
	}
	if r, ok := get("arca migrate --from dotenv (etcd"); ok {
		fmt.Fprintf(w, "%s: median %s (target <= 5 s)\n", r.what, seconds(r.median()))
	}
	mig, ok1 := get("arca migrate --from dotenv (file")
	peer, ok2 := get("arenzana/arca import")
	if ok1 && ok2 && mig.median() > 0 {
		fmt.Fprintf(w, "peer import / arca migrate (file vault): %s / %s = %.0fx (target >= 100x)\n",
			seconds(peer.median()), seconds(mig.median()), float64(peer.median())/float64(mig.median()))
	}
}

// baseline is the peak RSS of the baseline row, or 0 if there is none.
func baseline(rows []row) int64 {
	for _, r := range rows {
		if r.n == 0 && r.input == 0 {
			return r.rssKiB
		}
	}
	return 0
}

// cpuModel is the first model name in /proc/cpuinfo, or "unknown CPU".
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for line := range strings.Lines(string(b)) {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
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
