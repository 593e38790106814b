package main

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// maxSweep bounds the descriptors swept one by one when /dev/fd cannot be
// listed: a higher fd limit is refused rather than swept in part.
const maxSweep = 1 << 20

// protectProcess: no core file, no inherited descriptor passed on (see
// protect.go). macOS has no dumpable flag: what another process of the
// same user can learn of arca there is in docs/threat-model.md.
func protectProcess() error {
	if err := noCore(); err != nil {
		return err
	}
	if cloexecListed("/dev/fd") == nil {
		return nil
	}
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("mark inherited descriptors close-on-exec: %w", err)
	}
	if lim.Cur > maxSweep {
		return fmt.Errorf("mark inherited descriptors close-on-exec: /dev/fd cannot be read and the descriptor limit %d is above %d", lim.Cur, maxSweep)
	}
	for fd := 3; fd < int(lim.Cur); fd++ {
		if err := cloexec(fd); err != nil {
			return err
		}
	}
	return nil
}
