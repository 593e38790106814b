//go:build !linux

// Package waitexit waits for a child process to exit without freeing its
// pid where the system allows it, so that a signal sent afterwards to the
// process group the child led cannot reach a stranger.
package waitexit

import "os/exec"

// Await blocks until cmd's process has exited, and reaps it: elsewhere
// there is no portable way to wait for an exit and leave the child
// unreaped, so this is plain wait semantics. The child's pid is then free
// again, but its process group id is not while anything it started still
// runs (POSIX reuses neither a pid nor a group id while a group with that
// id exists), so a SIGKILL to the group still reaches what it must. Only
// once the group is empty could a new process take the id and lead a group
// of its own under it before that SIGKILL. It reports true: the caller must
// not reap again.
func Await(cmd *exec.Cmd) (reaped bool) {
	cmd.Wait()
	return true
}
