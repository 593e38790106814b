package inject

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
)

// The child's status comes back as a shell reports it. (cmd/arca runs
// every status and forwards signals to a real arca.)
func TestRunStatus(t *testing.T) {
	for script, want := range map[string]int{"exit 0": 0, "exit 7": 7, "exit 255": 255, "kill -s TERM $$": 143, "kill -s KILL $$": 137} {
		cmd, err := Command([]string{"sh", "-c", script})
		if err != nil {
			t.Fatal(err)
		}
		st, err := Run(cmd, Child{Environ: []string{"PATH=" + os.Getenv("PATH")}})
		if err != nil || st != want {
			t.Errorf("%s: %d, %v; want %d", script, st, err, want)
		}
	}
}

func TestCommandNotFound(t *testing.T) {
	cmd, err := Command([]string{"arca-no-such-tool-4f1b"})
	if cmd != nil || ops.CodeOf(err) != manifest.OpError || !strings.HasPrefix(err.Error(), "cannot run arca-no-such-tool-4f1b: ") {
		t.Fatalf("Command = %v, %v; want op_error starting %q", cmd, err, "cannot run arca-no-such-tool-4f1b: ")
	}
}

// The child has the allowlist and the secrets, and its output comes back
// redacted on both streams unless NoMask.
func TestRunEnvironmentAndMask(t *testing.T) {
	vars := mats("K", canary)
	environ := []string{"PATH=" + os.Getenv("PATH"), "AWS_SECRET_ACCESS_KEY=x", "K=parent"}
	for _, noMask := range []bool{true, false} {
		cmd, err := Command([]string{"sh", "-c", `env; printf '%s' "$K" >&2`})
		if err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		st, err := Run(cmd, Child{Environ: environ, Secrets: vars, NoMask: noMask, Stdout: &out, Stderr: &errb})
		if err != nil || st != 0 {
			t.Fatalf("no mask %v: %d, %v", noMask, st, err)
		}
		val := canary
		if !noMask {
			val = "<redacted:K>"
		}
		env := "\n" + out.String()
		if !strings.Contains(env, "\nPATH=") || !strings.Contains(env, "\nK="+val+"\n") ||
			strings.Contains(env, "AWS_") || strings.Contains(env, "parent") || errb.String() != val {
			t.Errorf("no mask %v: stdout %q, stderr %q", noMask, out.String(), errb.String())
		}
	}
}
