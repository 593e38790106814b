package main

import (
	"bytes"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// export prints every value of an env: to a terminal, where anyone looking
// at the screen reads them, only when asked with --terminal.
func TestExportAtTerminal(t *testing.T) {
	h := newArcaHome(t)
	h.put(t, "arca://app/db", []byte("hunter2"))
	run := func(args ...string) (int, string, string) {
		master, slave := openPTY(t)
		defer master.Close()
		cmd := exec.Command("arca", args...)
		cmd.Env, cmd.Dir = h.env, h.dir
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = slave, &stderr
		err := cmd.Run()
		slave.Close()
		screen, _ := io.ReadAll(master) // ends in EIO once the terminal is closed
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode(), string(screen), stderr.String()
	}
	code, screen, stderr := run("export")
	if code != 2 || strings.Contains(screen, "hunter2") || !strings.Contains(stderr, "stdout is a terminal and export prints every value") {
		t.Fatalf("export to a terminal: exit %d, screen %q, stderr %q; want 2, nothing shown, the refusal", code, screen, stderr)
	}
	code, screen, stderr = run("export", "--terminal")
	if code != 0 || !strings.Contains(screen, "hunter2") || stderr != "" {
		t.Fatalf("export --terminal: exit %d, screen %q, stderr %q; want 0 and the values shown", code, screen, stderr)
	}
}
