package pdp

import (
	"os/exec"
	"syscall"
)

// pPID is waitid's P_PID: wait for the one child whose pid is given.
const pPID = 1

// awaitExit blocks until the child has exited, without reaping it
// (WNOWAIT): until it is reaped its pid, which is also its process group id,
// cannot be reused, so a SIGKILL sent to the group afterwards cannot reach a
// stranger. Linux accepts a nil siginfo. Any error other than EINTR (ECHILD:
// already reaped) ends the wait; stop kills before it reaps either way. It
// reports false: the child is left for stop to reap.
func awaitExit(cmd *exec.Cmd) (reaped bool) {
	pid := cmd.Process.Pid
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid), 0,
			syscall.WEXITED|syscall.WNOWAIT, 0, 0)
		if errno != syscall.EINTR {
			return false
		}
	}
}
