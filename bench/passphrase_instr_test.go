package bench

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkServeGetPassphraseInstructions counts, under valgrind's
// callgrind, the instructions an `arca serve` session runs for its gets:
// one whose identity is plain, one that opened its protected identity at
// start. Each side runs twice, with getsSmall and with getsLarge gets on
// its stdin; the difference of the two counts is what getsLarge-getsSmall
// gets cost, the start (the scrypt among it) taken out. Instruction
// counts do not move with the machine's other work, as the times of
// BenchmarkServeGetPassphrase do. It reports instructions per get of each
// side and `unlocked/plain` (docs/performance.md's target: 1.05×). Each b.N
// round runs all four sessions; valgrind is needed (Debian's package).
func BenchmarkServeGetPassphraseInstructions(b *testing.B) {
	if _, err := exec.LookPath("valgrind"); err != nil {
		b.Skip("valgrind is not installed: apt-get install valgrind")
	}
	const getsSmall, getsLarge = 500, 1500
	dir := b.TempDir()
	arca := goBuild(b, dir, "../cmd/arca")
	var plain, unlocked float64
	for b.Loop() {
		for _, side := range []struct {
			name      string
			protected bool
			per       *float64
		}{{"plain", false, &plain}, {"pass", true, &unlocked}} {
			home, env := passHome(b, arca, b.TempDir(), side.name, side.protected)
			small := serveInstructions(b, arca, home, env, getsSmall)
			large := serveInstructions(b, arca, home, env, getsLarge)
			*side.per = float64(large-small) / (getsLarge - getsSmall)
		}
	}
	b.ReportMetric(plain, "instr/get-plain")
	b.ReportMetric(unlocked, "instr/get-unlocked")
	b.ReportMetric(unlocked/plain, "unlocked/plain")
}

var callgrindSummary = regexp.MustCompile(`(?m)^summary: ([0-9]+)$`)

// serveInstructions runs `arca serve` in home under callgrind with n gets
// on its stdin and returns the instructions it ran, every thread's.
// Go's asynchronous preemption signals confuse callgrind: they are off;
// so is the collector, whose runs vary from one session to the next.
func serveInstructions(b *testing.B, arca, home string, env []string, n int) int64 {
	var in strings.Builder
	for i := range n {
		fmt.Fprintf(&in, `{"id":%d,"op":"get","ref":"arca://app/db"}`+"\n", i)
	}
	out := filepath.Join(home, fmt.Sprintf("callgrind.%d", n))
	cmd := exec.Command("valgrind", "--tool=callgrind", "--callgrind-out-file="+out, arca, "serve")
	cmd.Env, cmd.Dir = append(env, "GODEBUG=asyncpreemptoff=1", "GOGC=off"), home
	cmd.Stdin = strings.NewReader(in.String())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		b.Fatalf("valgrind arca serve: %v\n%s", err, stderr.Bytes())
	}
	if got := strings.Count(stdout.String(), `"ok":true`); got != n {
		b.Fatalf("serve answered %d of %d gets: %.300s", got, n, stdout.Bytes())
	}
	report, err := os.ReadFile(out)
	if err != nil {
		b.Fatal(err)
	}
	m := callgrindSummary.FindSubmatch(report)
	if m == nil {
		b.Fatalf("no summary line in %s", out)
	}
	count, err := strconv.ParseInt(string(m[1]), 10, 64)
	if err != nil {
		b.Fatal(err)
	}
	return count
}
