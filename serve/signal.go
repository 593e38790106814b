package serve

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// Where a signal leaves the wire. Left to the Go runtime, SIGHUP, SIGINT
// and SIGTERM end the process at once — no stop event, and the PDP in
// flight, which leads a process group of its own, runs on as an orphan —
// and SIGQUIT, SIGABRT and (sent by another process) SIGILL, SIGTRAP,
// SIGSYS, SIGSEGV, SIGBUS, SIGFPE and SIGSTKFLT or SIGEMT end it with a
// goroutine dump on stderr, the audit wire. (A fault of arca's own is no
// sent signal: the runtime still turns it into a panic.) While Serve runs, each of them instead ends the session:
// ctx is cancelled, so the PDP in flight is killed with its whole group
// (package pdp) and the request in hand is answered and audited; the lines
// behind it get no reply; a stop event says "signal: <name>"; the wire is
// flushed and Serve returns an error, which cmd/arca exits 1 on. A second
// signal while this happens changes nothing. SIGKILL cannot be caught.

// stopSignals are the signals that end a session.
func stopSignals() []os.Signal {
	return append([]os.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT,
		syscall.SIGABRT, syscall.SIGILL, syscall.SIGTRAP, syscall.SIGSYS,
		syscall.SIGSEGV, syscall.SIGBUS, syscall.SIGFPE}, platformStopSignals()...)
}

// subscribe delivers the stop signals on sigs until unsubscribe is called.
func subscribe() (sigs <-chan os.Signal, unsubscribe func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, stopSignals()...)
	return ch, func() { signal.Stop(ch) }
}

// errInterrupted is what the loop returns when a signal or ctx ended the
// session; whoever ended it writes the stop event.
var errInterrupted = errors.New("session interrupted")

// serve runs the loop in its own goroutine until it ends, a signal arrives
// or ctx is done.
func (s *session) serve(ctx context.Context, sigs <-chan os.Signal) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.run(ctx) }()
	var why string
	select {
	case err := <-done:
		if !errors.Is(err, errInterrupted) {
			return err
		}
		why = "cancelled: " + ctx.Err().Error() // the loop saw ctx end first
	case sig := <-sigs:
		why = "signal: " + sig.String()
	case <-ctx.Done():
		why = "cancelled: " + ctx.Err().Error()
	}
	cancel() // the PDP in flight is killed; the request in hand ends
	return s.interrupt(why, done)
}

// interrupt ends the session once the loop is between requests (it may be
// blocked reading stdin: it returns without a write when the read does):
// stop names why, and everything pending is flushed.
func (s *session) interrupt(why string, done <-chan error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return <-done // the loop ended by itself first and wrote its stop
	}
	s.ended = true
	s.lifecycle("stop", why)
	if err := s.w.flush(); err != nil {
		return err
	}
	return fmt.Errorf("serve stopped: %s", why)
}

// next returns the next line. A read that may block (no line is buffered)
// is made without holding mu, so that interrupt can end the session
// meanwhile; the caller checks s.ended after it.
func (s *session) next(ready bool) ([]byte, error) {
	if h := s.held; h != nil {
		s.held = nil
		return h.line, h.err
	}
	if ready {
		return s.nextLine()
	}
	if s.fetch != nil {
		return s.waitAhead()
	}
	s.mu.Unlock()
	defer s.mu.Lock()
	return s.in.next()
}
