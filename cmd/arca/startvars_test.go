package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A secret never becomes a variable that the dynamic loader or a shell
// reads when the command starts, whether --secret asks for it or arca's
// environment holds it as a ref: arca run starts nothing, arca env prints
// nothing, both exit 2 before any secret is read or audited. Before, the
// loader of arca run's command printed the value on stderr.
func TestRunAndEnvRefuseStartupVariables(t *testing.T) {
	h := newArcaHome(t)
	const value = "CANARY-startup-value"
	h.put(t, "arca://app/db", []byte(value))
	auditLog := filepath.Join(h.dir, ".local", "state", "arca", "audit.log")
	before, err := os.ReadFile(auditLog)
	if err != nil {
		t.Fatal(err)
	}
	msg := func(name, who string) string {
		return "arca: secret name " + name + ": " + who + " reads it when a program starts, so no secret is injected as it (use another name)\n"
	}
	loader := msg("LD_PRELOAD", "the dynamic loader")
	tests := []struct {
		name    string
		environ []string
		args    []string
		stderr  string
	}{
		{"run --secret LD_PRELOAD", nil, []string{"run", "--secret", "LD_PRELOAD=arca://app/db", "--", "sh", "-c", "echo child-ran"}, loader},
		{"run, LD_PRELOAD in the environment", []string{"LD_PRELOAD=arca://app/db"}, []string{"run", "--", "sh", "-c", "echo child-ran"}, loader},
		{"run --mask, LD_PRELOAD in the environment", []string{"LD_PRELOAD=arca://app/db"}, []string{"run", "--mask", "--", "sh", "-c", "echo child-ran"}, loader},
		{"run, BASH_ENV in the environment", []string{"BASH_ENV=arca://app/db"}, []string{"run", "--", "bash", "-c", "echo child-ran"}, msg("BASH_ENV", "the shell")},
		{"run --secret PS4", nil, []string{"run", "--secret", "PS4=arca://app/db", "--", "sh", "-xc", "echo child-ran"}, msg("PS4", "the shell")},
		{"run --secret PATH", nil, []string{"run", "--secret", "PATH=arca://app/db", "--", "sh", "-c", "echo child-ran"}, msg("PATH", "every program that runs another by name")},
		{"run --secret DYLD_INSERT_LIBRARIES", nil, []string{"run", "--secret", "DYLD_INSERT_LIBRARIES=arca://app/db", "--", "sh", "-c", "echo child-ran"}, msg("DYLD_INSERT_LIBRARIES", "the dynamic loader")},
		{"env --secret LD_PRELOAD", nil, []string{"env", "--secret", "LD_PRELOAD=arca://app/db"}, loader},
		{"env, LD_PRELOAD in the environment", []string{"LD_PRELOAD=arca://app/db"}, []string{"env", "--format", "json"}, loader},
		{"env --secret NODE_OPTIONS", nil, []string{"env", "--secret", "NODE_OPTIONS=arca://app/db"}, msg("NODE_OPTIONS", "a language runtime")},
		{"run --secret LUA_INIT", nil, []string{"run", "--secret", "LUA_INIT=arca://app/db", "--", "sh", "-c", "echo child-ran"}, msg("LUA_INIT", "a language runtime")},
		{"run, LUA_INIT_5_4 in the environment", []string{"LUA_INIT_5_4=arca://app/db"}, []string{"run", "--", "sh", "-c", "echo child-ran"}, msg("LUA_INIT_5_4", "a language runtime")},
		{"env --secret ERL_AFLAGS", nil, []string{"env", "--secret", "ERL_AFLAGS=arca://app/db"}, msg("ERL_AFLAGS", "a language runtime")},
		{"env --secret ERL_FLAGS", nil, []string{"env", "--secret", "ERL_FLAGS=arca://app/db"}, msg("ERL_FLAGS", "a language runtime")},
		{"env, ERL_ZFLAGS in the environment", []string{"ERL_ZFLAGS=arca://app/db"}, []string{"env"}, msg("ERL_ZFLAGS", "a language runtime")},
		{"run --secret DOTNET_STARTUP_HOOKS", nil, []string{"run", "--secret", "DOTNET_STARTUP_HOOKS=arca://app/db", "--", "sh", "-c", "echo child-ran"}, msg("DOTNET_STARTUP_HOOKS", "a language runtime")},
		{"run --mask, CORECLR_PROFILER_PATH in the environment", []string{"CORECLR_PROFILER_PATH=arca://app/db"}, []string{"run", "--mask", "--", "sh", "-c", "echo child-ran"}, msg("CORECLR_PROFILER_PATH", "a language runtime")},
		{"env --secret PERL5DB", nil, []string{"env", "--secret", "PERL5DB=arca://app/db"}, msg("PERL5DB", "a language runtime")},
		{"run --secret PHPRC", nil, []string{"run", "--secret", "PHPRC=arca://app/db", "--", "sh", "-c", "echo child-ran"}, msg("PHPRC", "a language runtime")},
	}
	saved := h.env
	for _, tc := range tests {
		h.env = append(append([]string(nil), saved...), tc.environ...)
		out, st, stderr := h.status(t, nil, "arca", tc.args...)
		if strings.Contains(string(out)+stderr, value) {
			t.Errorf("%s: the value was printed", tc.name)
		}
		// arca's own loader, when it has one, reads the ref itself.
		stderr = withoutOwnLoader(stderr)
		if st != 2 || len(out) != 0 || stderr != tc.stderr {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2, nothing on stdout, stderr %q", tc.name, st, out, stderr, tc.stderr)
		}
	}
	h.env = saved
	if after, err := os.ReadFile(auditLog); err != nil || string(after) != string(before) {
		t.Errorf("a refused run or env read a secret: the audit file grew from %d to %d bytes (%v)", len(before), len(after), err)
	}
}

// withoutOwnLoader drops the complaints of a dynamic loader about
// LD_PRELOAD=arca://app/db in arca's own environment: the test binary that
// plays arca may be dynamically linked, and its loader reads that ref as
// the objects "arca" and "//app/db".
func withoutOwnLoader(stderr string) string {
	var keep []string
	for _, l := range strings.SplitAfter(stderr, "\n") {
		if !strings.HasPrefix(l, "ERROR: ld.so: object 'arca' ") && !strings.HasPrefix(l, "ERROR: ld.so: object '//app/db' ") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "")
}
