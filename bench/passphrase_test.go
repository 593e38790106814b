package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arca-secrets/arca/vault/identity"
)

// passHome is a home with a vault holding arca://app/db, its identity
// protected by a passphrase in pass (mode 0600) when protected.
func passHome(b *testing.B, arca, dir, name string, protected bool) (home string, env []string) {
	home = filepath.Join(dir, name)
	if err := os.MkdirAll(home, 0o700); err != nil {
		b.Fatal(err)
	}
	runIn(b, home, "", arca, "init")
	runIn(b, home, "postgres://app@db/prod", arca, "put", "arca://app/db")
	env = []string{"HOME=" + home}
	if protected {
		pass := filepath.Join(home, "pass")
		if err := os.WriteFile(pass, []byte("correct horse battery staple\n"), 0o600); err != nil {
			b.Fatal(err)
		}
		env = append(env, identity.PassphraseFileEnv+"="+pass)
		runEnv(b, home, env, arca, "identity", "passphrase")
	}
	return home, env
}

// runEnv runs args in home with the environment env and returns its CPU time.
func runEnv(b *testing.B, home string, env []string, args ...string) time.Duration {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env, cmd.Dir = env, home
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s: %v\n%s", args, err, out.Bytes())
	}
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// BenchmarkProcessGetPassphrase times, in turns in one loop, a whole `arca
// get` process (the README's static build) with a plain identity, the
// same get with a passphrase-protected identity read through
// $ARCA_PASSPHRASE_FILE, and bench/scryptonce, a process that opens the
// same protected identity and exits (one scrypt at identity.WorkFactor,
// age's, in a fresh process as the get's is). It reports
// `(pass-scrypt)/plain`, what the protected get costs beyond its one
// scrypt, against the plain get (docs/performance.md's target: 1.2×),
// each side's ns/op, and the same for CPU time.
func BenchmarkProcessGetPassphrase(b *testing.B) {
	dir := b.TempDir()
	arca, once := goBuild(b, dir, "../cmd/arca"), goBuild(b, dir, "./scryptonce")
	plainHome, plainEnv := passHome(b, arca, dir, "plain", false)
	passHomeDir, passEnv := passHome(b, arca, dir, "pass", true)
	idPath := filepath.Join(passHomeDir, ".config/arca/identity.txt")
	var wall, cpu [3]time.Duration
	var ratios []float64
	b.ResetTimer()
	for b.Loop() {
		var d [3]time.Duration
		t := time.Now()
		cpu[0] += runEnv(b, plainHome, plainEnv, arca, "get", "arca://app/db")
		d[0] = time.Since(t)
		t = time.Now()
		cpu[1] += runEnv(b, passHomeDir, passEnv, arca, "get", "arca://app/db")
		d[1] = time.Since(t)
		t = time.Now()
		cpu[2] += runEnv(b, passHomeDir, nil, once, idPath, filepath.Join(passHomeDir, "pass"))
		d[2] = time.Since(t)
		for i := range d {
			wall[i] += d[i]
		}
		ratios = append(ratios, float64(d[1])/float64(d[2]+d[0]*6/5))
	}
	b.StopTimer()
	n := float64(b.N)
	for i, name := range []string{"plain", "pass", "scrypt"} {
		b.ReportMetric(float64(wall[i].Nanoseconds())/n, "ns/"+name)
	}
	b.ReportMetric(float64(cpu[0].Nanoseconds())/n, "cpu-ns/plain")
	b.ReportMetric(float64(cpu[1].Nanoseconds())/n, "cpu-ns/pass")
	b.ReportMetric(float64(cpu[2].Nanoseconds())/n, "cpu-ns/scrypt")
	b.ReportMetric(float64(cpu[1]-cpu[2])/float64(cpu[0]), "cpu-(pass-scrypt)/plain")
	b.ReportMetric(float64(wall[1]-wall[2])/float64(wall[0]), "(pass-scrypt)/plain")
	b.ReportMetric(float64(wall[1])/float64(wall[2]+wall[0]*6/5), "pass/(scrypt+1.2plain)")
	slices.Sort(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "median-pass/(scrypt+1.2plain)")
}

// BenchmarkServeGetPassphrase times gets through two running `arca serve`
// sessions in turns, request by request, each side first every other
// time: one with a plain identity, one whose protected identity it opened
// at start. It reports their ratio
// `unlocked/plain` (docs/performance.md's target: 1.05×).
func BenchmarkServeGetPassphrase(b *testing.B) {
	dir := b.TempDir()
	arca := goBuild(b, dir, "../cmd/arca")
	type side struct {
		in   io.WriteCloser
		out  *bufio.Reader
		cmd  *exec.Cmd
		wall time.Duration
	}
	start := func(name string, protected bool) *side {
		home, env := passHome(b, arca, dir, name, protected)
		cmd := exec.Command(arca, "serve")
		cmd.Env, cmd.Dir = env, home
		in, err := cmd.StdinPipe()
		if err != nil {
			b.Fatal(err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		cmd.Stderr = io.Discard
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		return &side{in: in, out: bufio.NewReader(out), cmd: cmd}
	}
	sides := []*side{start("plain", false), start("pass", true)}
	get := func(s *side, i int) time.Duration {
		t := time.Now()
		fmt.Fprintf(s.in, `{"id":%d,"op":"get","ref":"arca://app/db"}`+"\n", i)
		line, err := s.out.ReadString('\n')
		if err != nil || !strings.Contains(line, `"ok":true`) {
			b.Fatalf("serve answered %q: %v", line, err)
		}
		d := time.Since(t)
		s.wall += d
		return d
	}
	for i := range 50 { // warm both up: the vault read, the identity opened
		get(sides[0], i)
		get(sides[1], i)
	}
	sides[0].wall, sides[1].wall = 0, 0
	b.ResetTimer()
	i := 0
	var ratios []float64
	for b.Loop() {
		i++
		d := [2]time.Duration{}
		d[i%2] = get(sides[i%2], i) // in turns, each side first every other time
		d[1-i%2] = get(sides[1-i%2], i)
		ratios = append(ratios, float64(d[1])/float64(d[0]))
	}
	b.StopTimer()
	for _, s := range sides {
		s.in.Close()
		s.cmd.Wait()
	}
	b.ReportMetric(float64(sides[0].wall.Nanoseconds())/float64(b.N), "ns/get-plain")
	b.ReportMetric(float64(sides[1].wall.Nanoseconds())/float64(b.N), "ns/get-unlocked")
	b.ReportMetric(float64(sides[1].wall)/float64(sides[0].wall), "unlocked/plain")
	// The median of the ratios of each pair of gets, which a burst of the
	// machine's other work moves less than the ratio of the sums.
	slices.Sort(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "median-unlocked/plain")
}
