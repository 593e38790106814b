package pdp

import (
	"context"
	"fmt"
	"github.com/arca-secrets/arca/internal/waitexit"
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// whyDeadline is what await reports when the decision's context ended first;
// decide turns it into "timed out" or "cancelled".
const whyDeadline = "deadline"

// child is one running PDP process and arca's ends of its pipes. Three
// goroutines serve it, each closing its channel when it returns.
type child struct {
	cmd    *exec.Cmd
	pgid   int      // the child's pid, which leads its process group
	stdin  *os.File // arca's write end of the child's stdin
	stdout *os.File // arca's read end of the child's stdout

	wrote    chan struct{} // the request writer returned
	readDone chan struct{} // the verdict reader returned; out and readErr are set
	exited   chan struct{} // the child exited; reaped is set

	out     []byte // at most MaxVerdict+1 bytes of stdout; more means too much
	readErr error
	reaped  bool // waitexit.Await reaped the child (not on Linux, which waits without)
}

// start spawns `shell -c script` (see spawn) and offers body on its stdin.
func start(shell, script string, env []string, body []byte) (*child, error) {
	cmd, inW, outR, err := spawn(shell, script, env)
	if err != nil {
		return nil, err
	}
	c := &child{
		cmd: cmd, pgid: cmd.Process.Pid, stdin: inW, stdout: outR,
		wrote: make(chan struct{}), readDone: make(chan struct{}), exited: make(chan struct{}),
	}
	go c.writeRequest(body)
	go c.readVerdict()
	go c.watchExit()
	return c, nil
}

// spawn starts `shell -c script` in its own process group with env as its
// whole environment and stderr on /dev/null, and returns arca's ends of its
// stdin and stdout.
func spawn(shell, script string, env []string) (*exec.Cmd, *os.File, *os.File, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, unreachable("cannot create pipe: " + err.Error())
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, nil, nil, unreachable("cannot create pipe: " + err.Error())
	}
	if env == nil {
		env = []string{} // nil would hand the child arca's whole environment
	}
	cmd := exec.Command(shell, "-c", script)
	cmd.Env = env
	cmd.Stdin = inR
	cmd.Stdout = outW
	cmd.Stderr = nil // os/exec opens /dev/null
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	inR.Close() // the child holds its own copies now
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, nil, nil, unreachable("cannot start " + shell + ": " + err.Error())
	}
	return cmd, inW, outR, nil
}

// writeRequest offers the request and closes stdin. A child that never reads
// leaves it blocked until stop closes the pipe or the child dies (EPIPE).
func (c *child) writeRequest(body []byte) {
	defer close(c.wrote)
	c.stdin.Write(body) // a child may ignore its stdin; that is not an error
	c.stdin.Close()
}

// readVerdict reads stdout to end of file, or to one byte past the cap,
// into one buffer that never grows.
func (c *child) readVerdict() {
	defer close(c.readDone)
	buf := make([]byte, MaxVerdict+1)
	n, err := io.ReadFull(c.stdout, buf)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		err = nil // a verdict shorter than the cap
	}
	c.out, c.readErr = buf[:n], err
}

func (c *child) watchExit() {
	defer close(c.exited)
	c.reaped = waitexit.Await(c.cmd)
}

// await waits until stdout has ended and the child has exited, and reports
// "" then. It stops early, reporting why, when ctx ends or stdout overflows.
func (c *child) await(ctx context.Context) string {
	readDone, exited := c.readDone, c.exited
	for readDone != nil || exited != nil {
		select {
		case <-ctx.Done():
			return whyDeadline
		case <-readDone:
			readDone = nil
			if why := c.readProblem(); why != "" {
				return why
			}
		case <-exited:
			exited = nil
		}
	}
	return ""
}

func (c *child) readProblem() string {
	switch {
	case c.readErr != nil:
		return "cannot read verdict: " + c.readErr.Error()
	case len(c.out) > MaxVerdict:
		return "verdict larger than " + strconv.Itoa(MaxVerdict) + " bytes"
	}
	return ""
}

// stop ends the decision: SIGKILL to the whole group (and to the child by
// pid, in case it left the group), close arca's pipe ends, wait for the three
// goroutines, and only then reap the child, so that its pid — the group id —
// stayed reserved while the group was killed (on Linux; see waitexit.Await for
// other systems). It reports a problem with the child's exit, or "".
func (c *child) stop() string {
	syscall.Kill(-c.pgid, syscall.SIGKILL)
	c.cmd.Process.Kill()
	c.stdin.Close()
	c.stdout.Close()
	<-c.wrote
	<-c.readDone
	<-c.exited
	if !c.reaped {
		c.cmd.Wait()
	}
	return exitProblem(c.cmd.ProcessState)
}

func exitProblem(ps *os.ProcessState) string {
	if ps == nil {
		return "cannot wait for the child"
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("killed by signal %d (%v)", int(ws.Signal()), ws.Signal())
	}
	if code := ps.ExitCode(); code != 0 {
		return "exited with status " + strconv.Itoa(code)
	}
	return ""
}
