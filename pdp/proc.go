package pdp

import (
	"context"
	"errors"
	"github.com/arca-secrets/arca/internal/waitexit"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/arca-secrets/arca/internal/ndjson"
)

// proc is one persistent child. Two goroutines serve it: the line reader
// (read) and the exit watcher (watch), which alone reaps the child.
type proc struct {
	cmd    *exec.Cmd
	pgid   int      // the child's pid, which leads its process group
	stdin  *os.File // arca's write end of the child's stdin
	stdout *os.File // arca's read end of the child's stdout

	// Guarded by the decider's mu.
	pending  []*waiter // decisions written and not yet answered, oldest first
	answered string    // the nonce of the last request it answered
	retired  bool      // retire ran: no decision is sent to it any more
	reaping  bool      // the watcher is reaping it: its group id may be reused, send no signal

	readDone chan struct{} // the reader returned
	exited   chan struct{} // the child exited (not yet reaped on Linux)
	done     chan struct{} // the watcher returned: the child is reaped
}

// exitGrace is how long the reader waits, at end of file, for the child to
// exit (so that the exit status names the cause), and the watcher, at the
// exit, for the reader to take the lines the child wrote before it.
const exitGrace = 200 * time.Millisecond

// startProc spawns the child and its two goroutines.
func (d *persistent) startProc() (*proc, error) {
	cmd, inW, outR, err := spawn(d.shell, d.cfg.Exec, Allowlist(d.cfg.Environ))
	if err != nil {
		return nil, err
	}
	p := &proc{cmd: cmd, pgid: cmd.Process.Pid, stdin: inW, stdout: outR,
		readDone: make(chan struct{}), exited: make(chan struct{}), done: make(chan struct{})}
	if d.onStart != nil {
		d.onStart(p.pgid)
	}
	go d.read(p)
	go d.watch(p)
	return p, nil
}

// write writes one request line. A child that does not read can block it
// once the pipe is full; at ctx's deadline a past write deadline unblocks
// it. The deadline is set only then: setting one on every write would cost
// more than the round trip it guards.
func (p *proc) write(body []byte, ctx context.Context) {
	stop := context.AfterFunc(ctx, func() { p.stdin.SetWriteDeadline(time.Unix(1, 0)) })
	p.stdin.Write(body) // a failed write leaves the answer to the exit watcher or the deadline
	stop()
}

// kill sends SIGKILL to the child's whole group, and to the child by pid in
// case it left the group. Only before the child is reaped.
func (p *proc) kill() {
	syscall.Kill(-p.pgid, syscall.SIGKILL)
	p.cmd.Process.Kill()
}

// read takes the child's stdout line by line, each at most MaxVerdict
// bytes before its newline, never holding more: a longer verdict retires
// the child before the rest of it is read (ndjson.Fail).
func (d *persistent) read(p *proc) {
	defer close(p.readDone)
	lr := ndjson.NewReader(p.stdout, MaxVerdict, ndjson.Fail)
	for {
		line, err := lr.Next()
		switch {
		case errors.Is(err, ndjson.ErrTooLong):
			d.retire(p, "verdict larger than "+strconv.Itoa(MaxVerdict)+" bytes", false)
			return
		case err != nil: // end of file (a last line cut short with it), or retire closed the pipe
			d.ended(p)
			return
		}
		if !d.deliver(p, line, lr.Buffered() > 0) {
			return
		}
	}
}

// ended handles the end of the child's stdout: an exit is the watcher's to
// report, with its status; a child that closed stdout and still runs is
// retired.
func (d *persistent) ended(p *proc) {
	t := time.NewTimer(exitGrace)
	defer t.Stop()
	select {
	case <-p.exited:
	case <-t.C:
		d.retire(p, "closed its stdout", false)
	}
}

// watch waits for the child to exit, lets the reader take what it wrote
// before, kills what is left of its group, reaps it and retires it with its
// exit status.
func (d *persistent) watch(p *proc) {
	defer close(p.done)
	reaped := waitexit.Await(p.cmd)
	close(p.exited)
	t := time.NewTimer(exitGrace)
	select {
	case <-p.readDone:
	case <-t.C:
	}
	t.Stop()
	d.mu.Lock()
	if !p.reaping {
		p.kill()
		p.reaping = true
	}
	d.mu.Unlock()
	if !reaped {
		p.cmd.Wait()
	}
	why := exitProblem(p.cmd.ProcessState)
	if why == "" {
		why = "exited with status 0"
	}
	d.retire(p, why, false)
	<-p.readDone
}
