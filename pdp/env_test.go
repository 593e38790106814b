package pdp

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// shellNames are variables a shell may export on its own (dash exports PWD).
var shellNames = map[string]bool{"PWD": true, "OLDPWD": true, "SHLVL": true, "_": true}

func TestAllowlist(t *testing.T) {
	in := []string{
		"PATH=/bin", "HOME=/h", "USER=u", "LOGNAME=u", "SHELL=/bin/sh", "LANG=C", "LC_ALL=C", "LC_TIME=C",
		"TERM=xterm", "TZ=UTC", "TMPDIR=/tmp",
		"ARCA_SECRET_CANARY=x1", "ARCA_APPROVER_TOKEN=x3", "AWS_SECRET_ACCESS_KEY=x2", "path=/lower", "PATHX=1", "XPATH=1", "LC=1",
		"LANGUAGE=en", "HOME", "=PATH", "",
	}
	want := in[:11]
	if got := Allowlist(in); !reflect.DeepEqual(got, want) {
		t.Errorf("Allowlist = %q\nwant        %q", got, want)
	}
	if got := Allowlist(nil); got == nil || len(got) != 0 {
		t.Errorf("Allowlist(nil) = %#v, want an empty non-nil slice", got)
	}
}

// childEnv runs `env` as the PDP with environ as the parent's environment and
// returns what the child saw, as name → value.
func childEnv(t *testing.T, environ []string) map[string]string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "env")
	cfg := Config{Exec: "/usr/bin/env > " + sq(file) + `; echo '{"allow":true}'`, Timeout: quick, Environ: environ}
	if _, err := Decide(context.Background(), cfg, getReq); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		name, value, _ := strings.Cut(line, "=")
		env[name] = value
	}
	return env
}

func TestChildEnvIsAllowlistOnly(t *testing.T) {
	// Values no path or name on the machine holds, so a find is a leak.
	canaries := []string{
		"ARCA_SECRET_CANARY=canary-7f3a91", "ARCA_APPROVER_TOKEN=canary-2c8e47", "AWS_SECRET_ACCESS_KEY=canary-b61d05",
		"CLOUDFLARE_API_TOKEN=canary-94ea3f", "GITHUB_TOKEN=canary-0d5c72", "SOME_PARENT_VAR=canary-e8147b",
	}
	allowed := []string{"PATH=" + os.Getenv("PATH"), "HOME=/home/pdp", "LANG=C.UTF-8", "LC_ALL=C", "TZ=UTC"}
	env := childEnv(t, append(append([]string{}, canaries...), allowed...))

	var extra []string
	for name, value := range env {
		if !shellNames[name] && !contains(allowed, name+"="+value) {
			extra = append(extra, name)
		}
	}
	for _, leak := range canariesIn(env, canaries) {
		t.Errorf("canary value %s", leak)
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		t.Errorf("child saw variables beyond the allowlist: %v", extra)
	}
	for _, kv := range allowed {
		name, value, _ := strings.Cut(kv, "=")
		if env[name] != value {
			t.Errorf("child saw %s=%q, want %q", name, env[name], value)
		}
	}
}

// canariesIn names each canary (NAME=value) whose value is in env, and
// the variable it is in.
func canariesIn(env map[string]string, canaries []string) []string {
	var out []string
	for name, value := range env {
		for _, c := range canaries {
			if _, cv, _ := strings.Cut(c, "="); strings.Contains(value, cv) {
				out = append(out, c+" in "+name)
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestCanariesInSeesAPassedValue is canariesIn's positive control: the
// canary values, passed to the child under allowlisted names, are found
// in what the child saw.
func TestCanariesInSeesAPassedValue(t *testing.T) {
	canaries := []string{"ARCA_SECRET_CANARY=x1", "AWS_SECRET_ACCESS_KEY=x2"}
	env := childEnv(t, []string{"HOME=/home/x1", "LANG=x2"})
	want := []string{"ARCA_SECRET_CANARY=x1 in HOME", "AWS_SECRET_ACCESS_KEY=x2 in LANG"}
	if got := canariesIn(env, canaries); !reflect.DeepEqual(got, want) {
		t.Errorf("canariesIn = %q, want %q", got, want)
	}
}

func TestEmptyAllowlistIsEmptyEnv(t *testing.T) {
	t.Setenv("ARCA_PARENT_ONLY", "x6") // in arca's own environment, never passed on
	env := childEnv(t, []string{"SOME_PARENT_VAR=x5"})
	for name := range env {
		if !shellNames[name] {
			t.Errorf("child saw %s with an empty allowlist", name)
		}
	}
}

func TestChildRunsInCallersDirectory(t *testing.T) {
	file := filepath.Join(t.TempDir(), "pwd")
	cfg := Config{Exec: "pwd -P > " + sq(file) + `; echo '{"allow":true}'`, Timeout: quick, Environ: testEnviron()}
	if _, err := Decide(context.Background(), cfg, getReq); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	want, _ := filepath.EvalSymlinks(wd)
	if strings.TrimSpace(string(got)) != want {
		t.Errorf("child ran in %q, want %q", strings.TrimSpace(string(got)), want)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
