package etcd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// explain puts an answer of the cluster that retrying cannot help in words
// that say what to change; the etcd error stays wrapped, and its text
// ends the message. No password, token or key is ever part of it.
func (r reach) explain(err error, prefix string) error {
	switch {
	case errors.Is(err, rpctypes.ErrPermissionDenied):
		return fmt.Errorf("permission denied: %s may not read and write the prefix %s "+
			"(give its role readwrite on the prefix: etcdctl role grant-permission ROLE readwrite %s --prefix): %w",
			r.who(), prefix, prefix, err)
	case errors.Is(err, rpctypes.ErrAuthFailed):
		return fmt.Errorf("authentication failed: the cluster refused the login of %s with the password given "+
			"(check username, and password or password_file): %w", r.who(), err)
	case errors.Is(err, rpctypes.ErrUserEmpty):
		return fmt.Errorf("authentication required: the cluster has auth enabled and this vault logs in as no one "+
			"(set username and password_file, or a client certificate whose common name is an etcd user): %w", err)
	}
	return err
}

// who names the etcd user in messages.
func (r reach) who() string {
	if r.user == "" {
		return "this client"
	}
	return fmt.Sprintf("etcd user %q", r.user)
}

// unreached reports whether err says nothing came back from the members:
// the client's own deadline or a connection it could not make, not an
// answer of the cluster (a member without a leader answers).
func unreached(err error) bool {
	var ee rpctypes.EtcdError
	if errors.As(err, &ee) {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	switch status.Code(err) {
	case codes.DeadlineExceeded, codes.Unavailable:
		return true
	}
	return false
}

// unreachable is an op that stopped because no member can be reached with
// these settings (every probe failed, see probe.go); it wraps what the
// client said.
type unreachable struct {
	findings []finding
	cause    error
}

func (u *unreachable) Error() string { return "cannot connect: " + describe(u.findings) }
func (u *unreachable) Unwrap() error { return u.cause }

// probeRun is a probe of the members running beside an op's tries.
type probeRun struct {
	done  chan struct{}
	fs    []finding // set before done is closed
	fatal error     // likewise: no member can be reached with these settings
	// stopped is done once fatal is set, to cut short a try in flight.
	stopped context.Context
}

// startProbe probes the members in the background after an attempt came
// back unanswered with err.
func (r reach) startProbe(ctx context.Context, err error) *probeRun {
	stopped, stop := context.WithCancel(context.Background())
	p := &probeRun{done: make(chan struct{}), stopped: stopped}
	go func() {
		fs := r.probe(ctx, r.endpoints)
		if allFatal(fs, r.endpoints) {
			p.fatal = &unreachable{findings: fs, cause: err}
		}
		p.fs = fs
		close(p.done)
		if p.fatal != nil {
			stop()
		}
	}()
	return p
}

// cut has cancel (a try's) run once p finds that no member can be
// reached; the returned func undoes that. A nil p cuts nothing.
func (p *probeRun) cut(cancel context.CancelFunc) func() bool {
	if p == nil {
		return func() bool { return false }
	}
	return context.AfterFunc(p.stopped, cancel)
}

// verdict is the error that ends the op once p is over and found that no
// member can be reached; nil until then, and for a nil p.
func (p *probeRun) verdict() error {
	if p == nil {
		return nil
	}
	select {
	case <-p.done:
		return p.fatal
	default:
		return nil
	}
}

// sleep waits d, or until ctx is done, or until p (which may be nil) has a
// verdict: then it returns it.
func (p *probeRun) sleep(ctx context.Context, d time.Duration) error {
	var stopped <-chan struct{}
	if p != nil {
		stopped = p.stopped.Done()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	case <-stopped:
	}
	return p.verdict()
}

// found is what p found, if it is over; nil for a nil p.
func (p *probeRun) found() []finding {
	if p == nil {
		return nil
	}
	select {
	case <-p.done:
		return p.fs
	default:
		return nil
	}
}

// late is an op that ran out of time on err, with what the probes found.
func late(err error, fs []finding) error {
	if len(fs) == 0 {
		return err
	}
	return fmt.Errorf("%w; %s", err, describe(fs))
}

// noLogin is a login the cluster did not answer in time. Its message says
// which members cannot be reached and why, in endpoint order, and never
// what the client said of it, which differs from run to run (a deadline, a
// request timed out, a connection to whichever member it tried last);
// that stays wrapped.
type noLogin struct {
	timeout  time.Duration
	findings []finding
	cause    error
}

func (n *noLogin) Error() string {
	why := "every member accepts connections, and none answered"
	if len(n.findings) > 0 {
		why = describe(n.findings)
	}
	return fmt.Sprintf("the cluster did not answer the login in time (%v): %s", n.timeout, why)
}

func (n *noLogin) Unwrap() error { return n.cause }
