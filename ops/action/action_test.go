package action

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/ops/config"
)

// shAction is an action running script with /bin/sh; its extra arguments
// are the script's "$@".
func shAction(script string) config.Action {
	return config.Action{
		Argv:           []string{"/bin/sh", "-c", script, "sh"},
		ArgsRE:         regexp.MustCompile(`^.*$`),
		MaxArgs:        config.DefaultMaxArgs,
		TimeoutMS:      60_000,
		MaxOutputBytes: config.DefaultMaxOutputBytes,
	}
}

func baseEnv() []string { return []string{"PATH=/usr/bin:/bin"} }

func run(t *testing.T, cfg config.Action, args, env []string) *Result {
	t.Helper()
	res, err := Run(context.Background(), cfg, args, env)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

// TestCheckArgs lists the ways an extra argument can break an action's
// rules: each is a *Refusal naming the argument's index and the rule.
func TestCheckArgs(t *testing.T) {
	flags := config.Action{ArgsRE: regexp.MustCompile(`^--(dry-run|verbose)$`), MaxArgs: 2}
	long := strings.Repeat("x", MaxArgBytes+1)
	tests := []struct {
		name string
		cfg  config.Action
		args []string
		want []string // phrases of the refusal; nil: allowed
	}{
		{"no argument", flags, nil, nil},
		{"allowed", flags, []string{"--verbose", "--dry-run"}, nil},
		{"none allowed", config.Action{MaxArgs: 4}, []string{"--verbose"}, []string{"no extra argument"}},
		{"too many", flags, []string{"--verbose", "--verbose", "--verbose"}, []string{"3 extra arguments", "at most 2"}},
		{"no match", flags, []string{"--verbose", "--force"}, []string{`argument 1 "--force"`, `--(dry-run|verbose)`}},
		{"match not whole", flags, []string{"--verbose; rm -rf /"}, []string{"argument 0", "does not match"}},
		{"newline after a match", flags, []string{"--verbose\n"}, []string{`argument 0 "--verbose\n"`}},
		{"NUL", config.Action{ArgsRE: regexp.MustCompile(`^(?s).*$`), MaxArgs: 1}, []string{"a\x00b"}, []string{`argument 0 "a\x00b"`, "NUL"}},
		{"too long", config.Action{ArgsRE: regexp.MustCompile(`^x*$`), MaxArgs: 1}, []string{long}, []string{"argument 0", "longer than 4096 bytes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckArgs(tt.cfg, tt.args)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("CheckArgs: %v, want allowed", err)
				}
				return
			}
			var r *Refusal
			if !errors.As(err, &r) {
				t.Fatalf("CheckArgs: %v (%T), want a *Refusal", err, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.Msg, w) {
					t.Errorf("refusal %q does not say %q", r.Msg, w)
				}
			}
		})
	}
}

// TestRefusalQuotesAtMost64Bytes: a refused argument is quoted cut to 64
// bytes, at a character boundary.
func TestRefusalQuotesAtMost64Bytes(t *testing.T) {
	cfg := config.Action{ArgsRE: regexp.MustCompile(`^[a-z]*$`), MaxArgs: 1}
	arg := strings.Repeat("A", 63) + "é" + "TAIL"
	err := CheckArgs(cfg, []string{arg})
	if err == nil {
		t.Fatal("CheckArgs allowed an argument that does not match")
	}
	if want := `"` + strings.Repeat("A", 63) + `"...`; !strings.Contains(err.Error(), want) {
		t.Fatalf("refusal %q does not quote %s", err, want)
	}
	if strings.Contains(err.Error(), "TAIL") {
		t.Fatalf("refusal %q quotes past 64 bytes", err)
	}
}

// TestRefusedArgumentNeverStarts: the action would create a marker file;
// after each refusal it does not exist. The allowed row is the control:
// the same action does create it.
func TestRefusedArgumentNeverStarts(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		refused bool
	}{
		{"not matching", []string{"--force"}, true},
		{"too many", []string{"--ok", "--ok", "--ok"}, true},
		{"with NUL", []string{"--ok\x00"}, true},
		{"allowed", []string{"--ok"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "started")
			cfg := shAction(`: > "$0"`)
			cfg.Argv = []string{"/bin/sh", "-c", `: > "$0"`, marker}
			cfg.ArgsRE, cfg.MaxArgs = regexp.MustCompile(`^--ok$`), 2
			res, err := Run(context.Background(), cfg, tt.args, baseEnv())
			var r *Refusal
			if tt.refused != errors.As(err, &r) {
				t.Fatalf("Run: %v, want refused %v", err, tt.refused)
			}
			if tt.refused && res != nil {
				t.Fatalf("a refused run returned %+v", res)
			}
			_, statErr := os.Stat(marker)
			if started := statErr == nil; started == tt.refused {
				t.Fatalf("marker exists: %v, want %v", started, !tt.refused)
			}
		})
	}
}

// TestArgsReachArgvExactly: the fixed argv then the allowed arguments,
// each as one word, no shell expansion of them.
func TestArgsReachArgvExactly(t *testing.T) {
	args := []string{"a b", "$HOME", "*", "", "--x='y'"}
	cfg := shAction(`printf '[%s]\n' "$@"`)
	cfg.MaxArgs = len(args)
	res := run(t, cfg, args, baseEnv())
	want := "[a b]\n[$HOME]\n[*]\n[]\n[--x='y']\n"
	if string(res.Stdout) != want || res.ExitCode != 0 {
		t.Fatalf("stdout %q, exit %d; want %q, 0", res.Stdout, res.ExitCode, want)
	}
}

// TestEnvIsExactlyGiven: the child's environment is the one passed, and
// nothing of arca's: a canary set in arca's environment does not reach it.
// The given variable reaching the output is the control that the child's
// environment is what it prints.
func TestEnvIsExactlyGiven(t *testing.T) {
	t.Setenv("ARCA_ACTION_CANARY", "canary-4d1f0b")
	env := append(baseEnv(), "GIVEN=given-7e2a", "EMPTY=")
	cfg := shAction("")
	cfg.Argv = []string{"env"} // looked up in env's PATH
	res := run(t, cfg, nil, env)
	got := strings.Split(strings.TrimSuffix(string(res.Stdout), "\n"), "\n")
	slices.Sort(got)
	want := slices.Sorted(slices.Values(env))
	if !slices.Equal(got, want) {
		t.Fatalf("child environment %q, want exactly %q", got, want)
	}
	if bytes.Contains(res.Stdout, []byte("canary-4d1f0b")) {
		t.Fatalf("arca's canary reached the child: %q", res.Stdout)
	}

	cfg.Argv = []string{"/usr/bin/env"}
	if res := run(t, cfg, nil, nil); len(res.Stdout) != 0 {
		t.Fatalf("a nil environment gave the child %q, want none", res.Stdout)
	}
}

// TestArgv0InEnvPath: a bare argv[0] is found in the PATH of the action's
// environment, not in arca's.
func TestArgv0InEnvPath(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "arca-probe"), []byte("#!/bin/sh\necho probed\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := shAction("")
	cfg.Argv = []string{"arca-probe"}
	res := run(t, cfg, nil, []string{"PATH=/nonexistent:relative:" + dir})
	if string(res.Stdout) != "probed\n" {
		t.Fatalf("stdout %q, want the probe's", res.Stdout)
	}

	t.Setenv("PATH", dir+string(filepath.ListSeparator)+os.Getenv("PATH"))
	_, err := Run(context.Background(), cfg, nil, baseEnv())
	var se *StartError
	if !errors.As(err, &se) || !strings.Contains(se.Msg, `"arca-probe"`) {
		t.Fatalf("Run with the probe on arca's PATH only: %v, want a *StartError naming it", err)
	}
}

// TestStartErrors: a child that cannot start is a *StartError naming
// argv[0] and why, and nothing of the environment it would have had.
func TestStartErrors(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, argv0 string
		env         []string
		why         string
	}{
		{"no such file", filepath.Join(dir, "missing"), baseEnv(), "no such file"},
		{"not executable", plain, baseEnv(), "permission denied"},
		{"a directory", dir, baseEnv(), "permission denied"},
		{"not on the PATH", "arca-no-such-tool", baseEnv(), "not found in the PATH"},
		{"no PATH", "sh", []string{"HOME=/"}, "has no PATH"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := shAction("")
			cfg.Argv = []string{tt.argv0}
			env := append(tt.env, "TOKEN=canary-9c3e5a")
			_, err := Run(context.Background(), cfg, nil, env)
			var se *StartError
			if !errors.As(err, &se) {
				t.Fatalf("Run: %v (%T), want a *StartError", err, err)
			}
			if !strings.Contains(se.Msg, `"`+tt.argv0+`"`) || !strings.Contains(se.Msg, tt.why) {
				t.Errorf("start error %q, want it to name %q and say %q", se.Msg, tt.argv0, tt.why)
			}
			if strings.Contains(se.Msg, "canary-9c3e5a") || strings.Contains(se.Msg, "/usr/bin:/bin") {
				t.Errorf("start error %q holds part of the environment", se.Msg)
			}
		})
	}
}

// TestStdinIsDevNull: cat reads end of file at once.
func TestStdinIsDevNull(t *testing.T) {
	cfg := shAction("")
	cfg.Argv = []string{"cat"}
	res := run(t, cfg, nil, baseEnv())
	if len(res.Stdout) != 0 || res.ExitCode != 0 || res.TimedOut {
		t.Fatalf("cat: stdout %q, exit %d, timed out %v; want empty, 0, false", res.Stdout, res.ExitCode, res.TimedOut)
	}
}
