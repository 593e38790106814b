//go:build !linux

package launch

import "syscall"

// sysProcAttr is the zero value where there is no parent-death signal.
func sysProcAttr() *syscall.SysProcAttr {
	return nil
}
