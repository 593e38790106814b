package main

import (
	"encoding/json"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// docUpstreamVar names the variable that holds the URL of the service the
// docs' serve sessions reach (http://127.0.0.1:PORT): a doc's config
// shows http://127.0.0.1:8080, and the session's mark puts this URL in
// its place before serve starts.
const docUpstreamVar = "DOC_UPSTREAM"

// docForgeCredential is the credential the upstream's git repositories
// want (as "Authorization: Bearer …"): the one docs/use.md stores as
// arca://ci/forge-token before it clones through the proxy.
const docForgeCredential = "ghp_doc_forge_5c1e8a2f"

// docUpstream starts, for the length of t, the service the docs' use
// examples call: on loopback, it answers a path ending in /missing with
// 404; a path holding ".git/" with git http-backend over a repository
// owner/repo.git of one commit, to a request that carries
// docForgeCredential as a bearer token (any other is 401); and any other
// request with 200 and a JSON object of its method, its path and the
// Authorization header it carried (and its X-Api-Key, when it has one),
// so a session shows the credential arriving, and scrubbed on its way
// back. It sends no Date, so an answer is the same on every run.
func docUpstream(t *testing.T) string {
	t.Helper()
	git := docGitBackend(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Date"] = nil
		if strings.Contains(r.URL.Path, ".git/") {
			if r.Header.Get("Authorization") != "Bearer "+docForgeCredential {
				http.Error(w, "no credential", http.StatusUnauthorized)
				return
			}
			git.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/missing") {
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"message":"no such ticket"}` + "\n"))
			return
		}
		echo := map[string]string{"method": r.Method, "path": r.URL.Path, "authorization": r.Header.Get("Authorization")}
		if k := r.Header.Get("X-Api-Key"); k != "" {
			echo["x-api-key"] = k
		}
		b, _ := json.Marshal(echo)
		w.Write(append(b, '\n'))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// docGitBackend returns git http-backend serving a bare repository
// owner/repo.git whose one commit says "the first commit".
func docGitBackend(t *testing.T) http.Handler {
	t.Helper()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatalf("git is not installed: %v", err)
	}
	home, root, work := t.TempDir(), t.TempDir(), t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=doc", "GIT_AUTHOR_EMAIL=doc@example.com",
		"GIT_COMMITTER_NAME=doc", "GIT_COMMITTER_EMAIL=doc@example.com"}
	for _, args := range [][]string{
		{"init", "-q", "src"},
		{"-C", "src", "commit", "-q", "--allow-empty", "-m", "the first commit"},
		{"clone", "-q", "--bare", "src", filepath.Join(root, "owner", "repo.git")},
	} {
		cmd := exec.Command(git, args...)
		cmd.Dir, cmd.Env = work, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return &cgi.Handler{Path: git, Args: []string{"http-backend"}, Dir: root,
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
}

// withURLs is a setup that gives each session the URLs of the services
// the docs call, each in its variable.
func withURLs(urls map[string]string) func(*testscript.Env) error {
	return func(env *testscript.Env) error {
		for name, url := range urls {
			env.Setenv(name, url)
		}
		return nil
	}
}

func TestDocUpstream(t *testing.T) {
	url := docUpstream(t)
	get := func(path, auth string) (*http.Response, map[string]string) {
		t.Helper()
		req, _ := http.NewRequest("GET", url+path, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var got map[string]string
		_ = json.NewDecoder(resp.Body).Decode(&got)
		return resp, got
	}
	resp, got := get("/tickets/7", "Bearer tok")
	if resp.StatusCode != 200 || got["path"] != "/tickets/7" || got["authorization"] != "Bearer tok" || resp.Header.Get("Date") != "" {
		t.Errorf("the upstream answered %d %v (Date %q)", resp.StatusCode, got, resp.Header.Get("Date"))
	}
	if resp, _ := get("/tickets/missing", ""); resp.StatusCode != 404 {
		t.Errorf("/tickets/missing answered %d, not 404", resp.StatusCode)
	}
	refs := "/owner/repo.git/info/refs?service=git-upload-pack"
	if resp, _ := get(refs, "Bearer tok"); resp.StatusCode != 401 {
		t.Errorf("the repository without its credential answered %d, not 401", resp.StatusCode)
	}
	if resp, _ := get(refs, "Bearer "+docForgeCredential); resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/x-git-upload-pack-advertisement" {
		t.Errorf("the repository with its credential answered %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}
