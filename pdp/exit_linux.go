package pdp

import "syscall"

// pPID is waitid's P_PID: wait for the one child whose pid is given.
const pPID = 1

// awaitExit blocks until the child pid has exited, without reaping it
// (WNOWAIT): until it is reaped its pid, which is also its process group id,
// cannot be reused, so a SIGKILL sent to the group afterwards cannot reach a
// stranger. Linux accepts a nil siginfo. Any error other than EINTR (ECHILD:
// already reaped) ends the wait; stop kills before it reaps either way.
func awaitExit(pid int) {
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid), 0,
			syscall.WEXITED|syscall.WNOWAIT, 0, 0)
		if errno != syscall.EINTR {
			return
		}
	}
}
