package inject

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/arca-secrets/arca/internal/passenv"
	"github.com/arca-secrets/arca/internal/scrub"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
)

// Child is what arca run gives a command besides its arguments.
type Child struct {
	Environ []string // arca's environment, of which the allowlist reaches the child
	// Secrets are added to the child's environment: each as its value, a
	// File one as the path of the file that holds its value.
	Secrets []Materialized
	// Passed are variables of arca's environment passed on as they are
	// (Pass), after the allowlisted ones.
	Passed []passenv.Var
	// NoMask hands the child Stdout and Stderr themselves (arca run
	// --no-mask: its terminal, when they are one). Without it, the
	// child's stdout and stderr are pipes whose bytes reach Stdout and
	// Stderr through scrub streams of Secrets' values (maskSet), unless
	// no value is registered: there is nothing to scrub, and the child
	// gets Stdout and Stderr themselves too.
	NoMask bool
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Getenv reads arca's environment for where the files go ($TMPDIR,
	// $XDG_RUNTIME_DIR); os.Getenv when nil.
	Getenv func(string) string
	// Warnf tells arca's user what they should know but that does not
	// stop the run (files on disk, a directory that could not be
	// removed); each message starts "warning: ". Nothing is told when nil.
	Warnf func(format string, args ...any)
}

// Command returns the command argv names, argv[0] looked up on $PATH. Run
// it through Run. Call it before any secret is read: nothing is
// materialized for a run that cannot start. A command that cannot be
// found is op_error.
func Command(argv []string) (*exec.Cmd, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	if cmd.Err != nil {
		return nil, ops.Errorf(manifest.OpError, "cannot run %s: %v", argv[0], startErr(cmd.Err))
	}
	return cmd, nil
}

// maskWaitDelay is how long arca keeps copying a masked child's output after
// the child exited, for output still in flight (a grandchild may hold the
// pipes open): then they are closed, and the streams flushed.
const maskWaitDelay = 5 * time.Second

// Run runs cmd with the environment ChildEnv(ch.Environ, ch.Passed, ch.Secrets) and
// ch's stdin, stdout and stderr, forwarding SIGINT, SIGTERM and SIGHUP to
// it until it exits (and ignoring SIGPIPE meanwhile). It returns the child's status as a shell reports it:
// its exit code, or 128+N when signal N killed it. An error is arca's own,
// op_error: the files could not be written, the child could not start, or
// it succeeded but its masked output could not be passed on.
//
// Unless NoMask, a value that cannot be scrubbed (maskSet) is told through
// Warnf, once per variable, once the signals are caught and before the
// files are written; the child still runs.
//
// Where bytes go: a File secret's value goes into a file of its own, in a
// fresh directory (writeFiles) made once the signals are caught and removed
// when the child has exited, on every path out of Run; the child gets its
// path. With NoMask, or nothing to scrub, the child has ch's streams
// themselves. Else its stdout and stderr are pipes that arca copies to
// ch's through scrub streams, closed (what they held back passed on) once
// the child exited.
func Run(cmd *exec.Cmd, ch Child) (int, error) {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	// A write to a stdout or stderr that nobody reads any more (a masked
	// copy, a warning) fails with EPIPE instead of killing arca before it
	// removes the files; the signal itself goes nowhere.
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	defer signal.Stop(pipe)
	var set *scrub.Set
	if !ch.NoMask {
		var warnings []string
		set, warnings = maskSet(ch.Secrets)
		for _, w := range warnings {
			ch.warnf("warning: %s", w)
		}
		if set.Forms() == 0 {
			set = nil
		}
	}
	files, warning, err := writeFiles(ch.Secrets, ch.getenv())
	if err != nil {
		return 0, err
	}
	defer func() {
		if err := files.remove(); err != nil {
			ch.warnf("warning: %v", err)
		}
	}()
	if warning != "" {
		ch.warnf("warning: %s", warning)
	}
	cmd.Env = ChildEnv(ch.Environ, ch.Passed, files.env(ch.Secrets))
	return run(cmd, ch, set, sigs)
}

// run starts cmd with ch's streams, its stdout and stderr scrubbed of set's
// values unless set is nil, waits for it, forwarding sigs, and returns its
// status (Run).
func run(cmd *exec.Cmd, ch Child, set *scrub.Set, sigs <-chan os.Signal) (int, error) {
	name := cmd.Args[0]
	cmd.Stdin, cmd.Stdout, cmd.Stderr = ch.Stdin, ch.Stdout, ch.Stderr
	var streams []*scrub.Stream
	if set != nil {
		out, errw := set.NewStream(orDiscard(ch.Stdout)), set.NewStream(orDiscard(ch.Stderr))
		cmd.Stdout, cmd.Stderr = out, errw
		streams = []*scrub.Stream{out, errw}
	}
	// Masked, a grandchild that keeps the child's output open must not
	// hold arca after the child exits: the pipes close after this delay.
	cmd.WaitDelay = maskWaitDelay
	if err := cmd.Start(); err != nil {
		return 0, ops.Errorf(manifest.OpError, "cannot run %s: %v", name, startErr(err))
	}
	err := wait(cmd, sigs)
	for _, st := range streams {
		if cerr := st.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	if st, ok := exitStatus(cmd.ProcessState); ok {
		if err != nil && cmd.ProcessState.Success() {
			// The child succeeded but its output could not be passed on.
			return 0, ops.Errorf(manifest.OpError, "%s: %v", name, err)
		}
		return st, nil
	}
	return 0, ops.Errorf(manifest.OpError, "%s: %v", name, err)
}

// orDiscard is w, or io.Discard for none (where os/exec would give the
// child the null device).
func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

func (ch Child) getenv() func(string) string {
	if ch.Getenv == nil {
		return os.Getenv
	}
	return ch.Getenv
}

func (ch Child) warnf(format string, args ...any) {
	if ch.Warnf != nil {
		ch.Warnf(format, args...)
	}
}

// wait waits for the started cmd, passing each signal from sigs on to it
// until it exited.
func wait(cmd *exec.Cmd, sigs <-chan os.Signal) error {
	exited := make(chan struct{})
	forwarded := make(chan struct{})
	go func() {
		defer close(forwarded)
		for {
			select {
			case s := <-sigs:
				_ = cmd.Process.Signal(s) // the child may have exited already
			case <-exited:
				return
			}
		}
	}()
	err := cmd.Wait()
	close(exited)
	<-forwarded
	return err
}

// exitStatus is the status a shell would report for ps: the exit code, or
// 128+N for a child killed by signal N.
func exitStatus(ps *os.ProcessState) (int, bool) {
	if ps == nil {
		return 0, false
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), true
	}
	return ps.ExitCode(), true
}

// startErr drops the "exec: NAME:" that os/exec puts before the cause.
func startErr(err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err
	}
	return err
}
