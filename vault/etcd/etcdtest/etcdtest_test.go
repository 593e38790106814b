package etcdtest

import (
	"context"
	"errors"
	"net"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arca-secrets/arca/vault/etcd/etcdtest/launch"
)

// wantGone fails t unless no process has the given PID any more.
func wantGone(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("kill(%d, 0) = %v, want ESRCH: the process still exists", pid, err)
	}
}

// wantRefused fails t unless nothing accepts connections at endpoint.
func wantRefused(t *testing.T, endpoint string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", endpoint, time.Second)
	if err == nil {
		conn.Close()
		t.Errorf("%s still accepts connections", endpoint)
	}
}

// put stores key=value through a client of c's running members.
func put(t *testing.T, c *Cluster, key, value string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := c.Client(t).Put(ctx, key, value); err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
}

// wantValue fails t unless a linearizable read from m alone says key=want.
func wantValue(t *testing.T, m *Member, key, want string) {
	t.Helper()
	cli, err := launch.NewClient(m.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	resp, err := cli.Get(ctx, key)
	if err != nil {
		t.Fatalf("get %s from %s: %v", key, m.Name, err)
	}
	if len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != want {
		t.Fatalf("get %s from %s: %v, want %q", key, m.Name, resp.Kvs, want)
	}
}

func TestSingleMember(t *testing.T) {
	c := Start(t, 1)
	if len(c.Members) != 1 {
		t.Fatalf("%d members, want 1", len(c.Members))
	}
	m := c.Members[0]
	if !strings.HasPrefix(m.ClientURL, "http://127.0.0.1:") {
		t.Errorf("ClientURL %q, want http://127.0.0.1:PORT", m.ClientURL)
	}
	want := []string{strings.TrimPrefix(m.ClientURL, "http://")}
	if got := c.Endpoints(); !slices.Equal(got, want) {
		t.Errorf("Endpoints() = %q, want %q", got, want)
	}
	if got := c.AllEndpoints(); !slices.Equal(got, want) {
		t.Errorf("AllEndpoints() = %q, want %q", got, want)
	}
	if m.Pid() == 0 {
		t.Error("Pid() = 0 for a running member")
	}
	if c.Leader(t) != m {
		t.Error("the only member is not the leader")
	}
	put(t, c, "app/key", "value")
	wantValue(t, m, "app/key", "value")
	if fi, err := os.Stat(m.m.LogPath()); err != nil || fi.Size() == 0 {
		t.Errorf("etcd log %s: %v, want a non-empty file", m.m.LogPath(), err)
	}
}

func TestLeaderFailover(t *testing.T) {
	c := Start(t, 3)
	if got := len(c.Endpoints()); got != 3 {
		t.Fatalf("%d endpoints, want 3", got)
	}
	old := c.Leader(t)
	pid := old.Pid()
	old.Kill(t)
	if got := old.Pid(); got != 0 {
		t.Errorf("Pid() = %d after Kill, want 0", got)
	}
	wantGone(t, pid)
	wantRefused(t, old.Endpoint())
	if eps := c.Endpoints(); len(eps) != 2 || slices.Contains(eps, old.Endpoint()) {
		t.Errorf("Endpoints() = %q after killing %s, want the 2 others", eps, old.Endpoint())
	}
	if got := len(c.AllEndpoints()); got != 3 {
		t.Errorf("%d of AllEndpoints() after Kill, want 3", got)
	}

	leader := c.Leader(t)
	if leader == old {
		t.Fatalf("leader is still the killed %s", old.Name)
	}
	put(t, c, "after/failover", "yes")

	// The old leader comes back as a follower and catches up.
	old.Restart(t)
	if old.Pid() == 0 || old.Pid() == pid {
		t.Errorf("Pid() = %d after Restart, want a new process (was %d)", old.Pid(), pid)
	}
	if got := len(c.Endpoints()); got != 3 {
		t.Errorf("%d endpoints after Restart, want 3", got)
	}
	wantValue(t, old, "after/failover", "yes")
}

func TestRestartWholeCluster(t *testing.T) {
	c := Start(t, 3)
	put(t, c, "durable", "1")
	for _, m := range c.Members {
		m.Kill(t)
	}
	if eps := c.Endpoints(); len(eps) != 0 {
		t.Fatalf("Endpoints() = %q with every member killed", eps)
	}
	for _, m := range c.Members {
		m.Restart(t)
	}
	c.Leader(t)
	for _, m := range c.Members {
		wantValue(t, m, "durable", "1")
	}
}

func TestCleanupKillsMembers(t *testing.T) {
	var pids []int
	var eps []string
	t.Run("cluster", func(t *testing.T) {
		c := Start(t, 3)
		for _, m := range c.Members {
			pids = append(pids, m.Pid())
		}
		eps = c.AllEndpoints()
		c.Members[0].Kill(t) // cleanup must cope with a member already dead
	})
	if len(pids) != 3 {
		t.Fatalf("subtest recorded %d PIDs, want 3", len(pids))
	}
	for _, pid := range pids {
		wantGone(t, pid)
	}
	for _, ep := range eps {
		wantRefused(t, ep)
	}
}
