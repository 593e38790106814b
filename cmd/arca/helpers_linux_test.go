package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// helperCommands are the test-only programs TestMain puts on $PATH beside
// "arca".
func helperCommands() map[string]func() {
	return map[string]func(){"nocaps": noCaps}
}

// nocaps CMD [ARGS...] runs CMD with no capabilities. Root holds them all,
// and with CAP_SYS_PTRACE (for environ, CAP_DAC_OVERRIDE or
// CAP_DAC_READ_SEARCH will do) reads any process's environment and memory,
// dumpable or not; the tests that check what a
// child of arca can read of arca run it as the user arca protects itself
// from: the same uid, without privilege. As any other user it runs CMD as
// it is.
func noCaps() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: nocaps CMD [ARGS...]")
		os.Exit(2)
	}
	// The bounding set is per thread: empty it on the thread that execs.
	// Past the last capability the kernel knows, the drop fails EINVAL.
	runtime.LockOSThread()
	if os.Geteuid() == 0 {
		for c := 0; ; c++ {
			err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
			if errors.Is(err, unix.EINVAL) && c > unix.CAP_SYS_PTRACE {
				break
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, "nocaps:", err)
				os.Exit(2)
			}
		}
	}
	path, err := exec.LookPath(os.Args[1])
	if err == nil {
		err = syscall.Exec(path, os.Args[1:], os.Environ())
	}
	fmt.Fprintln(os.Stderr, "nocaps:", err)
	os.Exit(2)
}
