package main

import "golang.org/x/sys/unix"

// The ioctls that get and set a terminal's attributes.
const (
	getTermios = unix.TCGETS
	setTermios = unix.TCSETS
)

// pendingInput is how many bytes the terminal on fd holds unread.
func pendingInput(fd int) int {
	n, _ := unix.IoctlGetInt(fd, unix.TIOCINQ)
	return n
}

// flushInput discards what the terminal on fd holds unread.
func flushInput(fd int) { _ = unix.IoctlSetInt(fd, unix.TCFLSH, unix.TCIFLUSH) }
