package launch

import "syscall"

// sysProcAttr has the kernel kill a member if the test process dies without
// running its cleanups (a panic, a timeout, a SIGKILL).
//
// Pdeathsig fires when the thread that started the member exits; the Go
// runtime keeps its threads, except those of goroutines that exit while
// locked to them, which etcdtest never does.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
