package serve

import (
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitEnv is the environment of every git the test runs: nothing of the
// machine's config, no prompt, no proxy.
func gitEnv(home string) []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_TERMINAL_PROMPT=0", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com"}
}

// runGit runs git with args in dir and returns its output.
func runGit(t *testing.T, git, home, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(git, args...)
	cmd.Dir, cmd.Env = dir, gitEnv(home)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// gitServer is an HTTPS git server of its own CA: git http-backend serving
// the bare repositories under root, to a request that carries the
// credential as a bearer token (any other is 401).
func gitServer(t *testing.T, git, root string) *testUpstream {
	backend := &cgi.Handler{Path: git, Args: []string{"http-backend"}, Dir: root,
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
	return newTestUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+proxyCanary {
			http.Error(w, "no credential", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	})
}

// TestProxyGitClone: a real git clones over HTTPS through the proxy,
// carrying the session's token, from a server that wants the credential;
// the clone has the commit, and the credential is on no event.
func TestProxyGitClone(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatalf("git is not installed: %v", err)
	}
	home, root, work := t.TempDir(), t.TempDir(), t.TempDir()
	src := filepath.Join(work, "src")
	runGit(t, git, home, work, "init", "-q", "src")
	runGit(t, git, home, src, "commit", "-q", "--allow-empty", "-m", "the commit through the proxy")
	runGit(t, git, home, work, "clone", "-q", "--bare", src, filepath.Join(root, "repo.git"))

	u := gitServer(t, git, root)
	f := newFixtureConfig(t, u.serviceTOML("git", `credential = "arca://t/cred"
auth = "bearer"
methods = ["GET", "POST"]
paths = ["/repo.git/*"]`))
	l := f.live(t)
	putCanary(t, l)
	o := l.openProxy(t, `"p"`, "git")

	runGit(t, git, home, work, "-c", "http.extraHeader=Authorization: Bearer "+o.Token,
		"clone", "-q", o.BaseURLs["git"]+"/repo.git", "dst")
	if log := runGit(t, git, home, filepath.Join(work, "dst"), "log", "--format=%s"); log != "the commit through the proxy\n" {
		t.Errorf("the clone's log is %q", log)
	}
	// Without the token the clone fails, and the server never sees it.
	seen := len(u.requests())
	cmd := exec.Command(git, "clone", "-q", o.BaseURLs["git"]+"/repo.git", "dst2")
	cmd.Dir, cmd.Env = work, gitEnv(home)
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Errorf("a clone without the token succeeded: %s", out)
	}
	if n := len(u.requests()); n != seen {
		t.Errorf("a clone without the token reached the server %d times", n-seen)
	}

	tr := l.end()
	evs := proxyEvents(t, tr)
	oks := 0
	for _, e := range evs {
		if e["outcome"] == "ok" {
			oks++
		}
	}
	if oks < 2 || oks != seen {
		t.Errorf("%d ok events through the proxy for %d requests served", oks, seen)
	}
	if strings.Contains(string(tr.rawErr), proxyCanary) || strings.Contains(string(tr.rawErr), o.Token) {
		t.Errorf("the audit wire holds the credential or the token")
	}
}
