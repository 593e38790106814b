package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// protectProcess (protect_linux.go, protect_darwin.go) is the first thing
// arca does, before it reads a config, a key or a value: every arca
// process may come to hold one, and every one may start a child (the
// command of arca run, serve's PDP) that runs as the same user.
//
//   - No core file: the core limit is 0, soft and hard, so a crash writes
//     no memory to disk.
//   - Not dumpable (Linux): a process of the same user, the children
//     included, can no longer open arca's /proc/PID/environ, mem or maps,
//     nor ptrace it; only root (CAP_SYS_PTRACE) can.
//   - No inherited descriptor reaches a child: every descriptor above
//     stderr that arca inherited is made close-on-exec. Go opens its own
//     that way; one that arca's parent left open would otherwise pass on
//     to every child arca starts.
//
// An error means arca could not protect itself and must not go on.

// noCore sets the core file size limit to 0, soft and hard.
func noCore() error {
	if err := unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{}); err != nil {
		return fmt.Errorf("set the core limit to 0: %w", err)
	}
	return nil
}

// cloexecListed makes every descriptor above 2 that dir (/proc/self/fd,
// /dev/fd) lists close-on-exec. The descriptor of dir itself, listed
// too, is closed by then; marking it fails harmlessly.
func cloexecListed(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 {
			continue
		}
		if err := cloexec(fd); err != nil {
			return err
		}
	}
	return nil
}

// cloexec makes fd close-on-exec; an fd that is not open is no error.
func cloexec(fd int) error {
	_, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC)
	if err != nil && !errors.Is(err, unix.EBADF) {
		return fmt.Errorf("mark descriptor %d close-on-exec: %w", fd, err)
	}
	return nil
}
