package bench

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/arca-secrets/arca/bench/synth"
)

// BenchmarkUIStartVsVerify times, in turns in one loop over the same
// audit file of 1,000,000 events (bench/synth's gets, puts and denials as
// the CLI writes them, one chain, 267 MB), a whole `arca audit verify
// FILE` process and `arca ui` from its start to the URL on its stdout
// (the trail read into the page's index, its chain checked, before the URL
// is printed). It reports each side's median (`verify-s`, `ui-url-s`) and
// their ratio (`ui/verify`), and the ratio of their CPU times
// (`cpu-ui/verify`, steadier on a busy machine): docs/performance.md's target is the URL within
// 2 s, about twice verify's time on this machine.
func BenchmarkUIStartVsVerify(b *testing.B) {
	dir := b.TempDir()
	arca := goBuild(b, dir, "../cmd/arca")
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		b.Fatal(err)
	}
	runIn(b, home, "", arca, "init")
	log := filepath.Join(home, ".local/state/arca/audit.log")
	if err := os.MkdirAll(filepath.Dir(log), 0o700); err != nil {
		b.Fatal(err)
	}
	if _, err := synth.WriteTrail(log, 1_000_000); err != nil {
		b.Fatal(err)
	}
	var verify, ui, verifyCPU, uiCPU []float64
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		cmd := runIn(b, home, "", arca, "audit", "verify", log)
		verify = append(verify, time.Since(start).Seconds())
		verifyCPU = append(verifyCPU, cpuOf(cmd))
		wall, cpu := uiToURL(b, arca, home)
		ui, uiCPU = append(ui, wall.Seconds()), append(uiCPU, cpu)
	}
	mv, mu := median(verify), median(ui)
	b.ReportMetric(mv, "verify-s")
	b.ReportMetric(mu, "ui-url-s")
	b.ReportMetric(mu/mv, "ui/verify")
	b.ReportMetric(median(uiCPU)/median(verifyCPU), "cpu-ui/verify")
}

// cpuOf is the CPU time, user and system, a command that ended took.
func cpuOf(cmd *exec.Cmd) float64 {
	return (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
}

// uiToURL starts arca ui in home and returns the time until its first
// line, the URL, and the CPU time the process took in all (it is stopped
// at once after the URL: what it spent is the start's).
func uiToURL(b *testing.B, arca, home string) (time.Duration, float64) {
	cmd := exec.Command(arca, "ui")
	cmd.Env, cmd.Dir = []string{"HOME=" + home}, home
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	_, err = bufio.NewReader(out).ReadString('\n')
	wall := time.Since(start)
	cmd.Process.Signal(os.Interrupt)
	cmd.Wait()
	if err != nil {
		b.Fatalf("arca ui printed no URL: %v", err)
	}
	return wall, cpuOf(cmd)
}
