package main

import (
	"fmt"
	"math"

	"golang.org/x/sys/unix"
)

// protectProcess: not dumpable, no core file, no inherited descriptor
// passed on (see protect.go).
func protectProcess() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("clear the dumpable flag: %w", err)
	}
	if err := noCore(); err != nil {
		return err
	}
	if cloexecListed("/proc/self/fd") == nil {
		return nil
	}
	// No /proc (a bare chroot or container): the kernel marks the range
	// itself (Linux 5.11 and later).
	if err := unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return fmt.Errorf("mark inherited descriptors close-on-exec: /proc/self/fd cannot be read and close_range failed: %w", err)
	}
	return nil
}
