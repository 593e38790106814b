// Package launch starts real etcd members on loopback: free ports, a data
// dir and a log file of their own, stopped by PID. Package etcdtest runs
// it for tests (t.TempDir, t.Cleanup, t.Fatal); it links no testing code
// itself, so a program that measures arca on etcd (bench/bulk) starts its
// cluster the same way.
//
// It runs Debian's etcd-server (etcd 3.4) from /usr/bin/etcd, or else the
// first etcd on PATH. Each member logs to a file in its directory, so no
// output of etcd reaches the caller's; when a member fails to start, the
// tail of that file is in the error. A member started is killed with
// SIGKILL by Kill, or by the kernel if the process that started it dies
// first (on Linux).
package launch

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
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// Binary is where Debian's etcd-server package installs etcd.
const Binary = "/usr/bin/etcd"

const (
	readyTimeout = 20 * time.Second       // for a member to answer with a leader
	probeTimeout = 2 * time.Second        // for one client request while polling
	pollInterval = 100 * time.Millisecond // between polls
	killTimeout  = 10 * time.Second       // for a process to exit after SIGKILL
)

// ErrPortTaken marks a member that exited because one of its ports was
// already in use: a caller may Start again, on new ports.
var ErrPortTaken = errors.New("port already in use")

// Cluster is a set of etcd members started together by Start.
type Cluster struct {
	Members []*Member
}

// LookBinary returns the etcd binary to run: Binary, or else etcd on PATH.
func LookBinary() (string, error) {
	if _, err := os.Stat(Binary); err == nil {
		return Binary, nil
	}
	if p, err := exec.LookPath("etcd"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("etcd: no etcd binary at %s or on PATH; "+
		"install Debian's etcd-server package (apt-get install etcd-server)", Binary)
}

// Start starts an n-member cluster of bin (n is 1 or 3; any n >= 1 works)
// on free loopback ports, member i in dir/m<i>, and returns when every
// member answers and the cluster has a leader, or ctx ends. On error every
// member started is killed; a port taken under a member is ErrPortTaken.
func Start(ctx context.Context, bin, dir string, n int) (*Cluster, error) {
	if n < 1 {
		return nil, fmt.Errorf("%d members, want at least 1", n)
	}
	ports, err := FreePorts(2 * n)
	if err != nil {
		return nil, err
	}
	c := newCluster(bin, dir, ports)
	return c, c.launch(ctx)
}

// launch starts c's members and waits until they are ready. On error they
// are killed.
func (c *Cluster) launch(ctx context.Context) error {
	for _, m := range c.Members {
		if err := m.start(); err != nil {
			c.Kill()
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	if err := waitReady(ctx, c.Members, true); err != nil {
		c.Kill()
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

// FreePorts returns n distinct loopback ports that were free a moment ago:
// it binds 127.0.0.1:0 n times, holding every listener until all are open.
func FreePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("etcd: finding a free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// Kill kills every member still running and waits for each to exit; it
// returns what went wrong, a process that would not exit among it.
func (c *Cluster) Kill() error {
	var errs []error
	for _, m := range c.Members {
		if m.alive {
			errs = append(errs, m.kill())
		}
	}
	return errors.Join(errs...)
}

// Endpoints are the client endpoints of the members still running, as
// "127.0.0.1:PORT" (no scheme) — the form the arca config uses.
func (c *Cluster) Endpoints() []string {
	var eps []string
	for _, m := range c.Members {
		if m.Running() {
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
		if m.Running() {
			n++
		}
	}
	return n
}

// NewClient returns a client of endpoints that writes no log.
func NewClient(endpoints ...string) (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: probeTimeout,
		Logger:      zap.NewNop(),
	})
}

// Leader asks each running member's Status and returns the running member
// whose ID a majority of all the cluster's members report as leader, or
// nil when there is none now.
func (c *Cluster) Leader(ctx context.Context) *Member {
	byID := map[uint64]*Member{}
	votes := map[uint64]int{}
	for _, m := range c.Members {
		if !m.Running() {
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
			if !m.Running() {
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
