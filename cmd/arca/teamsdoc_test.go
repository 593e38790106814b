package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// sessions runs the teammates' sessions of teamsDoc (<!-- teams-session -->
// blocks), in order, as one story on the doc's cluster, from a fresh
// vault: a line "ana$ CMD" or "ben$ CMD" is a bash command of that
// teammate (HOME and config of their own: ana's is the doc's, ben's the
// same with ben's etcd user and certificate, made as the doc says), and
// the lines up to the next command are its stdout and stderr, as examples
// are compared (a "…" stands for any run of characters, "# exit N" is the
// exit status). The members' ports are shown as the doc's.
func (s *teamsSetup) sessions(t *testing.T) {
	s.sh(t, `etcdctl del --prefix /arca/prod/ >/dev/null
rm -rf home
key="-newkey ec -pkeyopt ec_paramgen_curve:P-256 -noenc -days 1"
openssl req -x509 -CA ca.pem -CAkey ca.key $key -subj /CN=ben -keyout ben.key -out ben.pem \
  -addext basicConstraints=CA:FALSE -addext extendedKeyUsage=clientAuth 2>/dev/null
(umask 077 && openssl rand -hex 16 >ben.password)
etcdctl user add ben --interactive=false <ben.password >/dev/null
etcdctl user grant-role ben arca-prod >/dev/null
sed 's/ana/ben/g' arca.toml >ben.toml
`)
	blocks, err := readBlocks(teamsDoc)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, b := range blocks {
		if b.kind != "teams-session" {
			continue
		}
		n++
		for _, r := range teamRuns(t, b) {
			got, code := s.teammate(t, r)
			if want := r.stdout.String(); !docMatch(got, want) || r.status != strconv.Itoa(code) {
				t.Errorf("%s:%d: %s$ %s: exit %d (the doc says %s), printed:\n%s--- the doc shows\n%s", b.doc, b.line, r.who, r.args, code, r.status, got, want)
			}
		}
	}
	if n == 0 {
		t.Fatalf("%s has no teams-session blocks", teamsDoc)
	}
}

// teamRun is one teammate's command of a session.
type teamRun struct {
	*docRun
	who string
}

// teamRuns reads a session block: each "NAME$ " line, with the prompt
// made "$ " for the parser of examples.
func teamRuns(t *testing.T, b docBlock) []teamRun {
	var who []string
	var body strings.Builder
	for _, l := range strings.Split(strings.TrimSuffix(b.body, "\n"), "\n") {
		for _, name := range []string{"ana", "ben"} {
			if rest, ok := strings.CutPrefix(l, name+"$ "); ok {
				who, l = append(who, name), "$ "+rest
			}
		}
		body.WriteString(l + "\n")
	}
	runs, err := parseSession(body.String())
	if err != nil || len(runs) != len(who) {
		t.Fatalf("%s:%d: %v (every command is ana's or ben's)", b.doc, b.line, err)
	}
	out := make([]teamRun, len(runs))
	for i, r := range runs {
		r.stdout.WriteString(r.stderr.String()) // run as bash: one stream
		out[i] = teamRun{docRun: r, who: who[i]}
	}
	return out
}

// teammate runs r as its teammate and returns what it printed (the
// members' ports as the doc has them, the setup's directory as …) and its
// exit status.
func (s *teamsSetup) teammate(t *testing.T, r teamRun) (string, int) {
	t.Helper()
	home, config := filepath.Join(s.dir, "home"), filepath.Join(s.dir, "arca.toml")
	if r.who == "ben" {
		home, config = filepath.Join(s.dir, "home-ben"), filepath.Join(s.dir, "ben.toml")
	}
	cmd := exec.Command("bash", "-c", "{ "+r.args+"\n} 2>&1")
	cmd.Dir, cmd.Env = s.dir, append(teamsEnv(home, config), "HOME="+home)
	out, err := cmd.Output()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s$ %s: %v", r.who, r.args, err)
	}
	got := string(out)
	for i, p := range s.ports {
		got = strings.ReplaceAll(got, ":"+strconv.Itoa(p), fmt.Sprintf(":%d", teamsPorts[i]))
	}
	got = strings.ReplaceAll(got, s.dir, "…")
	if got != "" && !strings.HasSuffix(got, "\n") {
		got += "\n"
	}
	return got, code
}
