package audit

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on f, waiting for it: appends to the
// audit file are short, so a writer waits at most for another's append.
func lockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			return err
		}
	}
}

func unlockFile(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
