package action

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/arca-secrets/arca/internal/waitexit"
	"github.com/arca-secrets/arca/ops/config"
)

// drainGrace is how long Run waits, once the child has exited and its group
// is killed, for its output pipes to end. Only a process that left the
// group (setsid) can hold them open that long; then arca closes its ends
// and returns what it read.
const drainGrace = time.Second

// Run checks args (CheckArgs; nothing runs when they are refused) and runs
// cfg.Argv followed by args with exactly env ("NAME=value" entries; nil is
// an empty environment) as the child's environment: nothing of arca's own
// is added. argv[0] without a "/" is looked up in the PATH of env. The
// child's stdin is /dev/null; it leads a process group of its own, which
// is killed (SIGKILL) when cfg.TimeoutMS or ctx's deadline passes
// (Result.TimedOut) and once the child has exited, so that nothing it
// started outlives it. Each of stdout and stderr is kept up to
// cfg.MaxOutputBytes; the rest is read, counted and discarded. A process
// that left the group and still holds the output open delays Run by
// drainGrace at most; then Run closes its ends of the pipes.
//
// A child that cannot start is a *StartError; a refused argument a
// *Refusal. When ctx has ended before the start nothing runs, and when it
// is cancelled before the child exits Run kills the group: either way Run
// returns ctx's error.
func Run(ctx context.Context, cfg config.Action, args []string, env []string) (*Result, error) {
	if err := CheckArgs(cfg, args); err != nil {
		return nil, err
	}
	if len(cfg.Argv) == 0 || cfg.Argv[0] == "" || cfg.TimeoutMS <= 0 || cfg.MaxOutputBytes < 0 {
		return nil, errors.New("action: the action has no command, no timeout or a negative output cap")
	}
	path := cfg.Argv[0]
	if !strings.Contains(path, "/") {
		p, err := lookPath(path, env)
		if err != nil {
			return nil, err
		}
		path = p
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p, err := start(path, slices.Concat(cfg.Argv, args), env, cfg.MaxOutputBytes)
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithTimeout(ctx, time.Duration(cfg.TimeoutMS)*time.Millisecond)
	defer cancel()
	killed := p.wait(runCtx)
	if killed && errors.Is(ctx.Err(), context.Canceled) {
		return nil, ctx.Err()
	}
	return p.result(killed), nil
}

// process is one running child and arca's ends of its output pipes. Three
// goroutines serve it: a reader per stream and the exit watcher.
type process struct {
	cmd    *exec.Cmd
	pgid   int // the child's pid, which leads its process group
	stdout *stream
	stderr *stream
	exited chan struct{} // the child exited; reaped is set
	reaped bool          // the watcher reaped the child (not on Linux, which waits without)
}

// start starts the child in its own process group with env as its whole
// environment, stdin on /dev/null and its output on two pipes, each read
// by a goroutine of its own so that neither can block the other.
func start(path string, argv, env []string, limit int) (*process, error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("action: cannot create a pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, fmt.Errorf("action: cannot create a pipe: %w", err)
	}
	if env == nil {
		env = []string{} // nil would hand the child arca's whole environment
	}
	cmd := &exec.Cmd{Path: path, Args: argv, Env: env, Stdout: outW, Stderr: errW,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true}} // Stdin nil: /dev/null
	err = cmd.Start()
	outW.Close() // the child holds its own copies now
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return nil, startError(argv[0], err)
	}
	p := &process{cmd: cmd, pgid: cmd.Process.Pid,
		stdout: newStream(outR, limit), stderr: newStream(errR, limit), exited: make(chan struct{})}
	go p.stdout.read()
	go p.stderr.read()
	go p.watchExit()
	return p, nil
}

// startError names argv0 and the system's reason, and nothing else of the
// attempt: the environment is never part of it.
func startError(argv0 string, err error) error {
	why := "cannot be started"
	var errno syscall.Errno
	if errors.As(err, &errno) {
		why = errno.Error()
	}
	return &StartError{Msg: "cannot start " + strconv.Quote(argv0) + ": " + why}
}

func (p *process) watchExit() {
	defer close(p.exited)
	p.reaped = waitexit.Await(p.cmd)
}

// wait waits for the child to exit, killing its group first if ctx ends;
// then it kills the group (what the child left running dies with it), lets
// the pipes drain, and only then reaps the child, so that its pid — the
// group id — stayed reserved while the group was killed (on Linux; see
// waitexit.Await elsewhere). It reports whether ctx ended first.
func (p *process) wait(ctx context.Context) (killed bool) {
	select {
	case <-p.exited:
	case <-ctx.Done():
		killed = true
		p.kill()
		<-p.exited
	}
	p.kill()
	p.drain()
	if !p.reaped {
		p.cmd.Wait() // a non-zero exit is its error; the state says it
	}
	return killed
}

// kill sends SIGKILL to the whole group, and to the child by pid in case it
// left the group.
func (p *process) kill() {
	syscall.Kill(-p.pgid, syscall.SIGKILL)
	p.cmd.Process.Kill()
}

// drain waits for both readers to reach the end of their pipes, for at
// most drainGrace; then it closes arca's ends under them.
func (p *process) drain() {
	grace := time.NewTimer(drainGrace)
	defer grace.Stop()
	for _, s := range []*stream{p.stdout, p.stderr} {
		select {
		case <-s.done:
		case <-grace.C:
			p.stdout.r.Close()
			p.stderr.r.Close()
			<-s.done
		}
	}
}

// result reads the reaped child's state and what the readers kept.
func (p *process) result(timedOut bool) *Result {
	r := &Result{ExitCode: -1, TimedOut: timedOut, Stdout: p.stdout.buf, Stderr: p.stderr.buf,
		BytesOut: p.stdout.total + p.stderr.total}
	r.Truncated.Stdout, r.Truncated.Stderr = p.stdout.truncated(), p.stderr.truncated()
	if ps := p.cmd.ProcessState; ps != nil {
		r.ExitCode = ps.ExitCode()
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.Signal = signalName(ws.Signal())
		}
	}
	return r
}
