package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The README's quick start (<!-- quickstart -->) is two commands: the main
// job, run here as the README gives it, from a copy of the repository's
// root, in a fresh HOME; and the test command, which must be what .ci/run
// runs (CI runs it, so it cannot run inside itself).
func TestQuickStart(t *testing.T) {
	blocks, err := readBlocks("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	for _, b := range blocks {
		if b.kind == "quickstart" {
			cmds = append(cmds, commandLines(b.body)...)
		}
	}
	if len(cmds) != 2 {
		t.Fatalf("the quick start is %d commands, want 2: %q", len(cmds), cmds)
	}
	ci, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(ci), "\n"+cmds[1]+"\n") {
		t.Errorf(".ci/run does not end with the README's test command %q", cmds[1])
	}
	root := mirrorRoot(t)
	cmd := exec.Command("bash", "-c", cmds[0])
	cmd.Dir = root
	cmd.Env = append(cleanEnv(t), "HOME="+filepath.Join(root, "home"))
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", cmds[0], err, stderr.String())
	}
	out := stdout.String()
	if !strings.Contains(out, `{"id":1,"ok":true,`) || !strings.Contains(out, `{"id":2,"ok":true,"result":{"ref":"arca://demo/db","env":"default","value":"hunter2",`) {
		t.Errorf("the quick start printed on stdout:\n%s", out)
	}
	events := stderr.String()
	for _, e := range []string{`"event":"start"`, `"event":"put"`, `"event":"get"`, `"event":"stop","message":"eof"`} {
		if !strings.Contains(events, e) {
			t.Errorf("the quick start's audit wire lacks %s:\n%s", e, events)
		}
	}
	if strings.Contains(events, "hunter2") {
		t.Errorf("the value reached stderr:\n%s", events)
	}
}

// commandLines returns the lines of a shell block that are neither blank
// nor comments.
func commandLines(body string) []string {
	var cmds []string
	for _, l := range strings.Split(body, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			cmds = append(cmds, l)
		}
	}
	return cmds
}

// mirrorRoot returns a directory that holds the repository's sources (each
// top-level entry a link to the real one), so that a command run from the
// root writes nothing into the source tree.
func mirrorRoot(t *testing.T) string {
	t.Helper()
	src, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	for _, e := range entries {
		if name := e.Name(); name != "arca" && name != ".git" {
			if err := os.Symlink(filepath.Join(src, name), filepath.Join(root, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

// cleanEnv is the test's environment without arca's and XDG's variables
// and HOME, keeping Go's caches where they are.
func cleanEnv(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	dirs := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(dirs) != 3 {
		t.Fatalf("go env printed %q", out)
	}
	env := []string{"GOCACHE=" + dirs[0], "GOMODCACHE=" + dirs[1], "GOPATH=" + dirs[2], "GOFLAGS=-mod=readonly"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ARCA") && !strings.HasPrefix(kv, "XDG_") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "GO") {
			env = append(env, kv)
		}
	}
	return env
}
