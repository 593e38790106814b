//go:build !linux

package pdp

import "os/exec"

// awaitExit blocks until the child has exited, and reaps it: elsewhere
// there is no portable way to wait for an exit and leave the child unreaped,
// so this is plain wait semantics. The child's pid is then free again, but
// its process group id is not while anything it started still runs (POSIX
// reuses neither a pid nor a group id while a group with that id exists), so
// stop's SIGKILL to the group still reaches what it must. Only once the
// group is empty could a new process take the id and lead a group of its
// own under it before stop's SIGKILL. It reports true: stop must not reap
// again.
func awaitExit(cmd *exec.Cmd) (reaped bool) {
	cmd.Wait()
	return true
}
