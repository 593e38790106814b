package vault

import (
	"fmt"
	"os"
	"syscall"
)

// lockFile takes the exclusive writer lock of a file vault: flock on a
// sibling ".lock" file. The kernel releases it when the holder exits or dies,
// so there is never a stale lock to wait out. Readers take no lock: writes
// replace the vault by rename, so a reader sees the old file or the new one.
func lockFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}
