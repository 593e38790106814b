package waitexit

import (
	"os/exec"
	"syscall"
	"testing"
)

// TestAwaitLeavesThePidHeld: on Linux the exited child stays unreaped
// after Await, so its pid (and group id) still answers a signal, until
// Wait reaps it.
func TestAwaitLeavesThePidHeld(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "exit 0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if Await(cmd) {
		t.Fatal("Await reaped the child")
	}
	if err := syscall.Kill(-pid, 0); err != nil {
		t.Fatalf("signal to the exited child's group: %v, want it still held", err)
	}
	cmd.Wait()
	if err := syscall.Kill(pid, 0); err != syscall.ESRCH {
		t.Fatalf("signal to the reaped child: %v, want ESRCH", err)
	}
}
