package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/arca-secrets/arca/vault/etcd/etcdtest"
)

// teamsDoc is the doc whose setup TestTeamsSetup runs.
const teamsDoc = "../../docs/teams.md"

// teamsMark marks each fenced sh block of teamsDoc that belongs to its
// cluster setup; the blocks run in order, as one script.
const teamsMark = "<!-- teams-setup -->"

// teamsPorts are the ports the doc's setup uses: clients, then peers.
var teamsPorts = []int{23791, 23792, 23793, 23801, 23802, 23803}

// teamsDone is printed by the script once the doc's steps have run.
const teamsDone = "teams-setup: done"

// TestTeamsSetup runs the cluster setup of docs/teams.md as the doc gives
// it (certificates, three TLS members, etcd auth, arca's config, init, put
// and get), then uses the vault through it, checks that each wrong
// setting is reported in words, soon, without a secret, and runs the
// teammates' sessions the doc shows.
func TestTeamsSetup(t *testing.T) {
	s := startTeamsSetup(t)
	if !strings.Contains(s.out, "Authentication Enabled") || !strings.Contains(s.out, "vault for env prod: created etcd /arca/prod/") ||
		!strings.Contains(s.out, "arca://app/db created version 1 in env prod") || !strings.HasSuffix(s.out, "hunter2\n"+teamsDone+"\n") {
		t.Fatalf("the doc's setup printed:\n%s", s.out)
	}
	cfg := s.read(t, "arca.toml")
	const value = "CANARY-teams-v4lue"
	s.arcaOK(t, cfg, value, "put", "arca://app/api")
	if out := s.arcaOK(t, cfg, "", "get", "arca://app/api"); out != value {
		t.Errorf("get arca://app/api: %q, want %q", out, value)
	}
	listed := regexp.MustCompile(`(?m)^arca://app/(api|db)\s`)
	if out := s.arcaOK(t, cfg, "", "list"); len(listed.FindAllString(out, -1)) != 2 {
		t.Errorf("list:\n%s", out)
	}
	s.failures(t, cfg, value)
	s.sessions(t)
}

// failures runs arca with one setting wrong at a time, each with a
// deadline of 3 s: the message must say what is wrong and name the
// endpoints, come well within the deadline, and hold no secret.
func (s *teamsSetup) failures(t *testing.T, cfg, value string) {
	s.makeStrays(t)
	const timeout = 3 * time.Second
	cfg = edit(t, cfg, `tls_key = "ana.key"`+"\n", `tls_key = "ana.key"`+"\ntimeout_ms = 3000\n")
	secrets := []string{value, "hunter2", "PRIVATE KEY", s.read(t, "ana.password"), s.read(t, "eve.password"), s.read(t, "wrong.password")}
	for _, c := range []struct {
		name  string
		edits []string // old, new, ...
		args  []string
		want  []string
	}{
		{"wrong CA", []string{`tls_ca = "ca.pem"`, `tls_ca = "stray-ca.pem"`}, nil,
			[]string{"cannot connect: TLS handshake with", "failed: the member's certificate is not signed by the CA in tls_ca (x509: certificate signed by unknown authority"}},
		{"no client certificate", []string{`tls_cert = "ana.pem"` + "\n", "", `tls_key = "ana.key"` + "\n", ""}, nil,
			[]string{"cannot connect: TLS handshake with", "failed: the member asks for a client certificate, and none is set (tls_cert and tls_key)"}},
		{"client certificate of another CA", []string{`"ana.pem"`, `"stray.pem"`, `"ana.key"`, `"stray.key"`}, nil,
			[]string{"cannot connect: TLS handshake with", "failed: the member refused the client certificate in tls_cert"}},
		{"wrong password", []string{`"ana.password"`, `"wrong.password"`}, nil,
			[]string{`authentication failed: the cluster refused the login of etcd user "ana" with the password given`}},
		{"a user whose role lacks the prefix", []string{`"ana"`, `"eve"`, `"ana.password"`, `"eve.password"`}, nil,
			[]string{`permission denied: etcd user "eve" may not read and write the prefix /arca/prod/`}},
		{"a prefix outside the role", []string{`"/arca/prod/"`, `"/arca/other/"`}, []string{"put", "arca://app/db"},
			[]string{`permission denied: etcd user "ana" may not read and write the prefix /arca/other/`}},
	} {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			bad := cfg
			for i := 0; i < len(c.edits); i += 2 {
				bad = edit(t, bad, c.edits[i], c.edits[i+1])
			}
			args := c.args
			if args == nil {
				args = []string{"get", "arca://app/db"}
			}
			start := time.Now()
			stdout, stderr, code := s.arca(t, bad, value, args...)
			took := time.Since(start)
			t.Logf("%s in %v", strings.TrimSpace(stderr), took.Round(time.Millisecond))
			if code != 1 || stdout != "" {
				t.Errorf("exit %d, stdout %q, want exit 1 and nothing on stdout", code, stdout)
			}
			for _, w := range append(c.want, "https://127.0.0.1:"+strconv.Itoa(s.ports[0])) {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if strings.Contains(stderr, "deadline exceeded") {
				t.Errorf("stderr reports a deadline, not the cause:\n%s", stderr)
			}
			for _, secret := range secrets {
				if strings.Contains(stdout+stderr, strings.TrimSpace(secret)) {
					t.Errorf("the output holds a secret (%d bytes)", len(secret))
				}
			}
			if took > timeout+time.Second {
				t.Errorf("took %v, want well under the deadline of %v", took, timeout)
			}
		})
	}
	// The refused put wrote nothing outside the role's prefix.
	if out := s.etcdctl(t, "get", "--prefix", "--keys-only", "/arca/other/"); out != "" {
		t.Errorf("keys under /arca/other/ after a refused put:\n%s", out)
	}
}

// makeStrays makes what the failures use beside the doc's files: a CA the
// members do not trust and a certificate for ana it signed, a wrong
// password, and user eve, whose role covers /arca/dev/ only.
func (s *teamsSetup) makeStrays(t *testing.T) {
	s.sh(t, `key="-newkey ec -pkeyopt ec_paramgen_curve:P-256 -noenc -days 1"
openssl req -x509 $key -subj /CN=arca-etcd-ca -keyout stray-ca.key -out stray-ca.pem
openssl req -x509 -CA stray-ca.pem -CAkey stray-ca.key $key -subj /CN=ana -keyout stray.key -out stray.pem \
  -addext basicConstraints=CA:FALSE -addext extendedKeyUsage=clientAuth
echo CANARY-wrong-pa55word >wrong.password
openssl rand -hex 16 >eve.password
etcdctl role add arca-dev
etcdctl role grant-permission arca-dev readwrite /arca/dev/ --prefix
etcdctl user add eve --interactive=false <eve.password
etcdctl user grant-role eve arca-dev
`)
}

// teamsSetup is the doc's cluster, running.
type teamsSetup struct {
	dir   string // where the script ran: its files
	env   []string
	ports []int // teamsPorts, as chosen for this run
	out   string
}

// startTeamsSetup runs the doc's setup in a temporary directory and
// returns once it is done; the members run until the test ends.
func startTeamsSetup(t *testing.T) *teamsSetup {
	t.Helper()
	for _, tool := range []string{"sh", "openssl", "etcd", "etcdctl", "arca"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not on PATH (Debian: apt-get install openssl etcd-server etcd-client): %v", tool, err)
		}
	}
	script := setupScript(t)
	// The doc uses fixed ports; they are replaced by ports free now, so
	// the test runs beside anything else on this machine.
	ports, err := etcdtest.FreePorts(len(teamsPorts))
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range teamsPorts {
		re := regexp.MustCompile(`\b` + strconv.Itoa(p) + `\b`)
		if !re.MatchString(script) {
			t.Fatalf("%s: the setup no longer uses port %d; update teamsPorts", teamsDoc, p)
		}
		script = re.ReplaceAllLiteralString(script, strconv.Itoa(ports[i]))
	}
	s := &teamsSetup{dir: t.TempDir(), ports: ports}
	s.env = teamsEnv(filepath.Join(s.dir, "home"), filepath.Join(s.dir, "arca.toml"))
	// The shell stays, waiting on the members it started, so that they
	// are its children to the end (nothing else here would reap them):
	// stopping it (TERM, at cleanup) or the script failing (-e) kills
	// them and waits for them. jobs -p runs in the shell itself, not in a
	// subshell, which would see no jobs.
	wrapped := "trap 'exit 143' TERM\n" +
		"trap 'trap \"\" TERM; jobs -p >.jobs; kill -KILL $(cat .jobs) 2>/dev/null || true; wait' EXIT\n" +
		script + "echo\necho '" + teamsDone + "'\nwait\n"
	cmd := exec.Command("sh", "-ex", "-c", wrapped)
	cmd.Dir, cmd.Env = s.dir, s.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	seen := make(chan struct{})
	out, trace := &watchBuffer{want: teamsDone, seen: seen}, &watchBuffer{}
	cmd.Stdout, cmd.Stderr = out, trace
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { stopGroup(t, cmd, exited) })
	select {
	case <-seen:
		s.out = out.String()
		return s
	case err := <-exited:
		t.Fatalf("the doc's setup failed (%v); it printed:\n%s\ntrace:\n%s%s", err, out.String(), trace.String(), s.logs())
	case <-time.After(60 * time.Second):
		t.Fatalf("the doc's setup did not finish in 60 s; it printed:\n%s\ntrace:\n%s%s", out.String(), trace.String(), s.logs())
	}
	return nil
}

// setupScript is every block of teamsDoc that follows teamsMark, in order.
func setupScript(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(teamsDoc)
	if err != nil {
		t.Fatal(err)
	}
	var script strings.Builder
	blocks := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		if sc.Text() != teamsMark {
			continue
		}
		if !sc.Scan() || sc.Text() != "```sh" {
			t.Fatalf("%s:%d: %s is not followed by a fenced sh block", teamsDoc, line, teamsMark)
		}
		block, n := fencedBlock(sc)
		script.WriteString(block)
		line += n + 1
		blocks++
	}
	if blocks == 0 {
		t.Fatalf("%s has no block marked %s", teamsDoc, teamsMark)
	}
	return script.String()
}

// teamsEnv is this process's environment with nothing of etcd's, etcdctl's
// or arca's settings, HOME in the test's directory and ARCA_CONFIG as the
// doc's script exports it, so that a command run outside it sees the same.
func teamsEnv(home, config string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "ETCD") || strings.HasPrefix(name, "ARCA") || strings.HasPrefix(name, "XDG_") ||
			name == "HOME" || name == "GRPC_GO_LOG_SEVERITY_LEVEL" || name == "GORACE" {
			continue
		}
		env = append(env, kv)
	}
	if runtime.GOARCH != "amd64" {
		env = append(env, "ETCD_UNSUPPORTED_ARCH="+runtime.GOARCH) // etcd 3.4 runs there only so
	}
	return append(env, "HOME="+home, "ARCA_CONFIG="+config, raceEnv())
}

// stopGroup stops the script's shell, which stops the members and waits
// for them; if that takes over 10 s, every process of its group is killed.
func stopGroup(t *testing.T, cmd *exec.Cmd, exited <-chan error) {
	select {
	case <-exited:
		return
	default:
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Errorf("the setup's shell did not stop its members in 10 s; killing them")
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}
}

// logs is the tail of each member's log, for a failure message.
func (s *teamsSetup) logs() string {
	var b strings.Builder
	for _, m := range []string{"m1", "m2", "m3"} {
		data, err := os.ReadFile(filepath.Join(s.dir, m+".log"))
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		fmt.Fprintf(&b, "\n%s.log, last lines:\n%s\n", m, strings.Join(lines[max(0, len(lines)-10):], "\n"))
	}
	return b.String()
}

func (s *teamsSetup) read(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(s.dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// arca runs arca with config (written to a file of its own) and stdin.
func (s *teamsSetup) arca(t *testing.T, config, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	f, err := os.CreateTemp(s.dir, "arca-*.toml") // beside the doc's files: the config's paths are relative
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(config); err != nil || f.Close() != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "arca", args...)
	cmd.Dir, cmd.Env = s.dir, append(s.env, "ARCA_CONFIG="+f.Name())
	cmd.Stdin = strings.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return o.String(), e.String(), ee.ExitCode()
	}
	if err != nil {
		t.Fatalf("arca %v: %v", args, err)
	}
	return o.String(), e.String(), 0
}

// arcaOK runs arca, which must succeed, and returns its stdout.
func (s *teamsSetup) arcaOK(t *testing.T, config, stdin string, args ...string) string {
	t.Helper()
	stdout, stderr, code := s.arca(t, config, stdin, args...)
	if code != 0 {
		t.Fatalf("arca %v: exit %d: %s", args, code, stderr)
	}
	return stdout
}

// sh runs script in the setup's directory, as the doc's root (etcdctl's
// settings are the doc's), and returns its stdout.
func (s *teamsSetup) sh(t *testing.T, script string) string {
	t.Helper()
	eps := make([]string, 3)
	for i := range eps {
		eps[i] = "https://127.0.0.1:" + strconv.Itoa(s.ports[i])
	}
	cmd := exec.Command("sh", "-e", "-c", script)
	cmd.Dir = s.dir
	cmd.Env = append(s.env, "ETCDCTL_ENDPOINTS="+strings.Join(eps, ","), "ETCDCTL_CACERT=ca.pem", "ETCDCTL_CERT=root.pem", "ETCDCTL_KEY=root.key")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v: %s", script, err, stderr.String())
	}
	return string(out)
}

func (s *teamsSetup) etcdctl(t *testing.T, args ...string) string {
	t.Helper()
	return s.sh(t, "etcdctl "+strings.Join(args, " "))
}

// edit replaces old, which must be in s, with new.
func edit(t *testing.T, s, old, new string) string {
	t.Helper()
	if !strings.Contains(s, old) {
		t.Fatalf("the config has no %q:\n%s", old, s)
	}
	return strings.ReplaceAll(s, old, new)
}

// watchBuffer keeps what is written to it, from any goroutine, and
// closes seen (when not nil) once a line is want.
type watchBuffer struct {
	mu   sync.Mutex
	b    bytes.Buffer
	want string
	seen chan struct{}
}

func (w *watchBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	if w.seen != nil && strings.Contains(w.b.String(), "\n"+w.want+"\n") {
		close(w.seen)
		w.seen = nil
	}
	return len(p), nil
}

func (w *watchBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}
