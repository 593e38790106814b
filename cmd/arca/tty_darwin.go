package main

import "golang.org/x/sys/unix"

// The ioctls that get and set a terminal's attributes.
const (
	getTermios = unix.TIOCGETA
	setTermios = unix.TIOCSETA
)

// From <sys/filio.h> and <sys/fcntl.h>, which x/sys does not name for darwin.
const (
	fionread = 0x4004667f // _IOR('f', 127, int)
	fread    = 0x1
)

// pendingInput is how many bytes the terminal on fd holds unread.
func pendingInput(fd int) int {
	n, _ := unix.IoctlGetInt(fd, fionread)
	return n
}

// flushInput discards what the terminal on fd holds unread (tcflush with
// TCIFLUSH is TIOCFLUSH with FREAD here).
func flushInput(fd int) { _ = unix.IoctlSetPointerInt(fd, unix.TIOCFLUSH, fread) }
