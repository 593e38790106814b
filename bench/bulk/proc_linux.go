package main

import "syscall"

// dieWithParent makes a child that is killed when this program dies, so a
// benchmark stopped half-way leaves no etcd member running.
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
