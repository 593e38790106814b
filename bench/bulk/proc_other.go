//go:build !linux

package main

import "syscall"

// dieWithParent is nothing where the kernel cannot tie a child's life to
// its parent's: the members are stopped when the program ends.
func dieWithParent() *syscall.SysProcAttr { return nil }
