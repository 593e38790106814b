package waitexit

import (
	"os/exec"
	"testing"
)

// TestAwaitReturnsOnExit: Await returns once the child has exited, and a
// child it reports unreaped is reaped by Wait with its exit status.
func TestAwaitReturnsOnExit(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "exit 3")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if !Await(cmd) {
		cmd.Wait()
	}
	if got := cmd.ProcessState.ExitCode(); got != 3 {
		t.Fatalf("exit code %d, want 3", got)
	}
}
