// Package waitexit waits for a child process to exit without freeing its
// pid where the system allows it, so that a signal sent afterwards to the
// process group the child led cannot reach a stranger.
package waitexit

import (
	"os/exec"
	"syscall"
)

// pPID is waitid's P_PID: wait for the one child whose pid is given.
const pPID = 1

// Await blocks until cmd's process has exited, without reaping it
// (WNOWAIT): until it is reaped its pid, which is also its process group id
// when it was started with Setpgid, cannot be reused, so a SIGKILL sent to
// the group afterwards cannot reach a stranger. Linux accepts a nil
// siginfo. Any error other than EINTR (ECHILD: already reaped) ends the
// wait. It reports false: the caller reaps the child (cmd.Wait) once it no
// longer signals the group.
func Await(cmd *exec.Cmd) (reaped bool) {
	pid := cmd.Process.Pid
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid), 0,
			syscall.WEXITED|syscall.WNOWAIT, 0, 0)
		if errno != syscall.EINTR {
			return false
		}
	}
}
