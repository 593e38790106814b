package inject

import "golang.org/x/sys/unix"

// shm is where Linux mounts a tmpfs for every user, on most systems.
const shm = "/dev/shm"

// fileParents are the directories a run's file directory may be made in,
// best first: /dev/shm when it is a tmpfs, then $XDG_RUNTIME_DIR when it is
// the user's own (mode 0700), then $TMPDIR (or /tmp). Each but a
// memory-backed one carries a warning.
func fileParents(getenv func(string) string) []parent {
	return fileParentsFrom(shm, getenv)
}

// fileParentsFrom is fileParents with shm's place given.
func fileParentsFrom(shm string, getenv func(string) string) []parent {
	var ps []parent
	if inMemory(shm) {
		ps = append(ps, parent{dir: shm})
	}
	if d := getenv("XDG_RUNTIME_DIR"); d != "" && privateDir(d) {
		ps = append(ps, candidate(d))
	}
	return append(ps, candidate(tempDir(getenv)))
}

// candidate is dir as a parent, with a warning unless it is memory-backed.
func candidate(dir string) parent {
	if inMemory(dir) {
		return parent{dir: dir}
	}
	return parent{dir: dir, warning: "the --file values are on disk, in " + dir + " (no tmpfs at /dev/shm or $XDG_RUNTIME_DIR); they are removed when the command exits"}
}

// inMemory reports whether dir is on a tmpfs or a ramfs.
func inMemory(dir string) bool {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return false
	}
	return st.Type == unix.TMPFS_MAGIC || st.Type == unix.RAMFS_MAGIC
}
