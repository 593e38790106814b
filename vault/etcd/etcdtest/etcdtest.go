// Package etcdtest starts real etcd members for tests (package launch,
// run with the test's temporary dir and cleanup): free loopback ports,
// temporary data dirs, stopped by PID.
//
// It runs Debian's etcd-server (etcd 3.4) from /usr/bin/etcd, or else the
// first etcd on PATH. Each member logs to a file in its directory under
// t.TempDir, so test output stays clean; when a member fails to start, the
// tail of that file is in the failure message. Every member still running
// when the test ends is killed with SIGKILL and waited for.
package etcdtest

import (
	"context"
	"errors"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/arca-secrets/arca/vault/etcd/etcdtest/launch"
)

// Binary is where Debian's etcd-server package installs etcd.
const Binary = launch.Binary

const (
	startAttempts = 3                      // Start tries this many sets of ports
	leaderTimeout = 10 * time.Second       // for Leader to find one
	pollInterval  = 100 * time.Millisecond // between polls
)

// Cluster is a set of etcd members started together by Start.
type Cluster struct {
	Members []*Member
	c       *launch.Cluster
}

// Member is one etcd server process of a Cluster.
type Member struct {
	Name      string
	ClientURL string // "http://127.0.0.1:PORT"
	m         *launch.Member
}

// Start starts an n-member cluster (n is 1 or 3; any n >= 1 works) and
// returns when every member answers and the cluster has a leader. t.Cleanup
// kills every member still running, so no etcd process outlives the test.
// If a member fails to start, Start calls t.Fatal with the tail of its log;
// if a port was taken under it, Start first tries again on new ports.
func Start(t testing.TB, n int) *Cluster {
	t.Helper()
	if n < 1 {
		t.Fatalf("etcdtest.Start: %d members, want at least 1", n)
	}
	bin, err := launch.LookBinary()
	if err != nil {
		t.Fatal(err)
	}
	for attempt := 1; ; attempt++ {
		// TempDir before Cleanup: cleanups run last-in first-out, so the
		// members are dead before their directory is removed.
		c, err := launch.Start(t.Context(), bin, t.TempDir(), n)
		if err == nil {
			t.Cleanup(func() {
				if err := c.Kill(); err != nil {
					t.Errorf("etcdtest: %v", err)
				}
			})
			return wrap(c)
		}
		if !errors.Is(err, launch.ErrPortTaken) || attempt == startAttempts {
			t.Fatalf("etcdtest.Start(%d), attempt %d: %v", n, attempt, err)
		}
		t.Logf("etcdtest.Start(%d), attempt %d: a port was taken; trying new ports", n, attempt)
	}
}

func wrap(c *launch.Cluster) *Cluster {
	w := &Cluster{c: c}
	for _, m := range c.Members {
		w.Members = append(w.Members, &Member{Name: m.Name, ClientURL: m.ClientURL, m: m})
	}
	return w
}

// FreePorts returns n distinct loopback ports that were free a moment ago,
// for tests that start etcd their own way.
func FreePorts(n int) ([]int, error) { return launch.FreePorts(n) }

// Endpoints are the client endpoints of the members still running, as
// "127.0.0.1:PORT" (no scheme) — the form the arca config uses.
func (c *Cluster) Endpoints() []string { return c.c.Endpoints() }

// AllEndpoints are every member's client endpoints, running or not, as
// "127.0.0.1:PORT".
func (c *Cluster) AllEndpoints() []string { return c.c.AllEndpoints() }

// Client returns a client of the members running now, closed when the test
// ends. Its logger is silenced.
func (c *Cluster) Client(t testing.TB) *clientv3.Client {
	t.Helper()
	cli, err := launch.NewClient(c.Endpoints()...)
	if err != nil {
		t.Fatalf("etcdtest: client of %v: %v", c.Endpoints(), err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// Leader returns the member that is leader now: it asks each running
// member's Status and returns the running member whose ID a majority of all
// the cluster's members report as leader. It calls t.Fatal if there is none
// within 10 s.
func (c *Cluster) Leader(t testing.TB) *Member {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), leaderTimeout)
	defer cancel()
	for {
		if l := c.c.Leader(ctx); l != nil {
			for _, m := range c.Members {
				if m.m == l {
					return m
				}
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("etcdtest: no leader within %v among %v", leaderTimeout, c.Endpoints())
		case <-time.After(pollInterval):
		}
	}
}

// Endpoint is m's client endpoint as "127.0.0.1:PORT".
func (m *Member) Endpoint() string { return m.m.Endpoint() }

// Pid is the process ID of m, or 0 when m is not running.
func (m *Member) Pid() int { return m.m.Pid() }

// Kill stops m with SIGKILL and waits for the process to exit.
func (m *Member) Kill(t testing.TB) {
	t.Helper()
	if err := m.m.Kill(); err != nil {
		t.Fatalf("etcdtest: Kill(%s): %v", m.Name, err)
	}
}

// Restart starts the stopped member m again, on the same ports and data
// dir (see launch.Member.Restart for when it returns). On failure it calls
// t.Fatal with the tail of m's log.
func (m *Member) Restart(t testing.TB) {
	t.Helper()
	if err := m.m.Restart(t.Context()); err != nil {
		t.Fatalf("etcdtest: Restart(%s): %v", m.Name, err)
	}
}
