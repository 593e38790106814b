// Package etcdtest starts real etcd members for tests: free loopback ports,
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
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// Binary is where Debian's etcd-server package installs etcd.
const Binary = "/usr/bin/etcd"

const (
	startAttempts = 3                      // Start tries this many sets of ports
	readyTimeout  = 20 * time.Second       // for a member to answer with a leader
	leaderTimeout = 10 * time.Second       // for Leader to find one
	probeTimeout  = 2 * time.Second        // for one client request while polling
	pollInterval  = 100 * time.Millisecond // between polls
	killTimeout   = 10 * time.Second       // for a process to exit after SIGKILL
)

// errPortTaken marks a member that exited because one of its ports was
// already in use: Start then tries again on new ports.
var errPortTaken = errors.New("port already in use")

// Cluster is a set of etcd members started together by Start.
type Cluster struct {
	Members []*Member
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
	bin, err := lookBinary()
	if err != nil {
		t.Fatal(err)
	}
	for attempt := 1; ; attempt++ {
		c, err := start(t, bin, n)
		if err == nil {
			return c
		}
		if !errors.Is(err, errPortTaken) || attempt == startAttempts {
			t.Fatalf("etcdtest.Start(%d), attempt %d: %v", n, attempt, err)
		}
		t.Logf("etcdtest.Start(%d), attempt %d: a port was taken; trying new ports", n, attempt)
	}
}

// lookBinary returns the etcd binary to run: Binary, or else etcd on PATH.
func lookBinary() (string, error) {
	if _, err := os.Stat(Binary); err == nil {
		return Binary, nil
	}
	if p, err := exec.LookPath("etcd"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("etcdtest: no etcd binary at %s or on PATH; "+
		"install Debian's etcd-server package (apt-get install etcd-server)", Binary)
}

// start makes one attempt at starting an n-member cluster of bin.
func start(t testing.TB, bin string, n int) (*Cluster, error) {
	ports, err := freePorts(2 * n)
	if err != nil {
		return nil, err
	}
	// TempDir before launch's Cleanup: cleanups run last-in first-out, so
	// the members are dead before their directory is removed.
	c := newCluster(bin, t.TempDir(), ports)
	return c, c.launch(t)
}

// launch starts c's members and waits until they are ready. Members still
// running when the test ends are killed then; on error, they are at once.
func (c *Cluster) launch(t testing.TB) error {
	t.Cleanup(func() { c.killAll(t) })
	for _, m := range c.Members {
		if err := m.start(); err != nil {
			c.killAll(t)
			return err
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), readyTimeout)
	defer cancel()
	if err := waitReady(ctx, c.Members, true); err != nil {
		c.killAll(t)
		return err
	}
	return nil
}

// newCluster lays out the members of a new cluster in dir: member i is
// named "m<i>" and uses ports[2i] for clients and ports[2i+1] for peers.
func newCluster(bin, dir string, ports []int) *Cluster {
	c := &Cluster{}
	var initial []string
	for i := 0; i < len(ports)/2; i++ {
		m := newMember(c, bin, dir, "m"+strconv.Itoa(i), ports[2*i], ports[2*i+1])
		c.Members = append(c.Members, m)
		initial = append(initial, m.Name+"="+m.peerURL)
	}
	// The token only has to differ from other clusters' on this machine.
	token := fmt.Sprintf("etcdtest-%d-%d", os.Getpid(), ports[0])
	for _, m := range c.Members {
		m.args = append(m.args,
			"--initial-cluster="+strings.Join(initial, ","),
			"--initial-cluster-state=new",
			"--initial-cluster-token="+token)
	}
	return c
}

// FreePorts returns n distinct loopback ports that were free a moment ago,
// for tests that start etcd their own way.
func FreePorts(n int) ([]int, error) { return freePorts(n) }

// freePorts returns n distinct loopback ports that were free a moment ago:
// it binds 127.0.0.1:0 n times, holding every listener until all are open.
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("etcdtest: finding a free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// killAll kills every member still running, reporting a process that does
// not exit as a test error.
func (c *Cluster) killAll(t testing.TB) {
	for _, m := range c.Members {
		if m.alive {
			if err := m.kill(); err != nil {
				t.Errorf("etcdtest: %v", err)
			}
		}
	}
}

// Endpoints are the client endpoints of the members still running, as
// "127.0.0.1:PORT" (no scheme) — the form the arca config uses.
func (c *Cluster) Endpoints() []string {
	var eps []string
	for _, m := range c.Members {
		if m.running() {
			eps = append(eps, m.Endpoint())
		}
	}
	return eps
}

// AllEndpoints are every member's client endpoints, running or not, as
// "127.0.0.1:PORT".
func (c *Cluster) AllEndpoints() []string {
	var eps []string
	for _, m := range c.Members {
		eps = append(eps, m.Endpoint())
	}
	return eps
}

// running counts the members still running.
func (c *Cluster) running() int {
	n := 0
	for _, m := range c.Members {
		if m.running() {
			n++
		}
	}
	return n
}

// Client returns a client of the members running now, closed when the test
// ends. Its logger is silenced.
func (c *Cluster) Client(t testing.TB) *clientv3.Client {
	t.Helper()
	cli, err := newClient(c.Endpoints()...)
	if err != nil {
		t.Fatalf("etcdtest: client of %v: %v", c.Endpoints(), err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// newClient returns a client of endpoints that writes no log.
func newClient(endpoints ...string) (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: probeTimeout,
		Logger:      zap.NewNop(),
	})
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
		if m := c.leaderNow(ctx); m != nil {
			return m
		}
		select {
		case <-ctx.Done():
			t.Fatalf("etcdtest: no leader within %v among %v", leaderTimeout, c.Endpoints())
		case <-time.After(pollInterval):
		}
	}
}

// leaderNow asks each running member's Status and returns the leader that
// a majority of members agree on, or nil.
func (c *Cluster) leaderNow(ctx context.Context) *Member {
	byID := map[uint64]*Member{}
	votes := map[uint64]int{}
	for _, m := range c.Members {
		if !m.running() {
			continue
		}
		st, err := m.status(ctx)
		if err != nil || st.Leader == 0 {
			continue
		}
		byID[st.Header.MemberId] = m
		votes[st.Leader]++
	}
	for id, n := range votes {
		if m := byID[id]; m != nil && n > len(c.Members)/2 {
			return m
		}
	}
	return nil
}

// waitReady polls members until each is ready (see Member.ready). It fails
// at once if a member's process exits, and when ctx is done.
func waitReady(ctx context.Context, members []*Member, needLeader bool) error {
	pending := slices.Clone(members)
	var lastErr error
	for {
		for _, m := range members {
			if !m.running() {
				return m.failure("exited while starting", nil)
			}
		}
		pending = slices.DeleteFunc(pending, func(m *Member) bool {
			err := m.ready(ctx, needLeader)
			if err != nil {
				lastErr = err
			}
			return err == nil
		})
		if len(pending) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return pending[0].failure("did not become ready", lastErr)
		case <-time.After(pollInterval):
		}
	}
}
