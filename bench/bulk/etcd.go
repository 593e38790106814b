package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// etcdBinary is where Debian's etcd-server package installs etcd, the
// etcd the project's tests run (see vault/etcd/etcdtest).
const etcdBinary = "/usr/bin/etcd"

const (
	etcdReadyTimeout = 30 * time.Second // for every member to report healthy
	etcdStopTimeout  = 10 * time.Second // for a member to exit after SIGTERM
)

// cluster is a set of etcd members started by startCluster.
type cluster struct {
	members []*member
}

// member is one etcd process.
type member struct {
	name      string
	clientURL string // http://127.0.0.1:PORT
	logPath   string
	cmd       *exec.Cmd
	exited    chan struct{} // closed once cmd has been waited for
}

// startCluster starts an n-member etcd cluster on free loopback ports, with
// its data dirs and logs in dir, and returns once every member reports
// healthy (which takes a leader). On error, the members are stopped.
func startCluster(dir string, n int) (*cluster, error) {
	ports, err := freePorts(2 * n)
	if err != nil {
		return nil, err
	}
	c := &cluster{}
	var initial []string
	for i := range n {
		m := &member{
			name:      "m" + strconv.Itoa(i),
			clientURL: "http://127.0.0.1:" + strconv.Itoa(ports[2*i]),
		}
		c.members = append(c.members, m)
		initial = append(initial, m.name+"=http://127.0.0.1:"+strconv.Itoa(ports[2*i+1]))
	}
	token := fmt.Sprintf("arca-bulk-%d-%d", os.Getpid(), ports[0])
	for i, m := range c.members {
		args := memberArgs(m, filepath.Join(dir, m.name), ports[2*i+1], strings.Join(initial, ","), token)
		if err := m.start(filepath.Join(dir, m.name), args); err != nil {
			c.stop()
			return nil, err
		}
	}
	if err := c.waitHealthy(); err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

// memberArgs are etcd's flags for m, living in dir, with peers on peerPort.
func memberArgs(m *member, dir string, peerPort int, initial, token string) []string {
	peerURL := "http://127.0.0.1:" + strconv.Itoa(peerPort)
	m.logPath = filepath.Join(dir, "etcd.log")
	return []string{
		"--name=" + m.name,
		"--data-dir=" + filepath.Join(dir, "data"),
		"--listen-client-urls=" + m.clientURL,
		"--advertise-client-urls=" + m.clientURL,
		"--listen-peer-urls=" + peerURL,
		"--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=" + initial,
		"--initial-cluster-state=new",
		"--initial-cluster-token=" + token,
		"--logger=zap",
		"--log-outputs=" + m.logPath,
	}
}

// freePorts returns n distinct loopback ports that were free a moment ago.
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// start starts m's process with args, its output in m's log. The kernel
// kills it if this program dies without stopping it.
func (m *member) start(dir string, args []string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	logf, err := os.OpenFile(m.logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close() // the child has its own copy
	cmd := exec.Command(etcdBinary, args...)
	cmd.Env = etcdEnv()
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = dieWithParent()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting etcd member %s: %w", m.name, err)
	}
	m.cmd, m.exited = cmd, make(chan struct{})
	go func(exited chan<- struct{}) {
		cmd.Wait()
		close(exited)
	}(m.exited)
	return nil
}

// etcdEnv is this program's environment without etcd's ETCD_* settings.
func etcdEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ETCD_") {
			out = append(out, kv)
		}
	}
	return out
}

// waitHealthy polls each member's /health until all say true.
func (c *cluster) waitHealthy() error {
	ctx, cancel := context.WithTimeout(context.Background(), etcdReadyTimeout)
	defer cancel()
	for _, m := range c.members {
		if err := m.waitHealthy(ctx); err != nil {
			return err
		}
	}
	return nil
}

// waitHealthy polls m's /health until it says true, m exits or ctx is done.
func (m *member) waitHealthy(ctx context.Context) error {
	var last error
	for {
		select {
		case <-m.exited:
			return fmt.Errorf("etcd member %s exited while starting; see %s", m.name, m.logPath)
		default:
		}
		if last = m.health(ctx); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("etcd member %s not healthy within %v (%v); see %s", m.name, etcdReadyTimeout, last, m.logPath)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// health asks m's /health endpoint once.
func (m *member) health(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.clientURL+"/health", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"health":"true"`) {
		return errors.New("health: " + resp.Status + " " + strings.TrimSpace(string(b)))
	}
	return nil
}

// endpoints are the members' client endpoints as host:port.
func (c *cluster) endpoints() []string {
	var eps []string
	for _, m := range c.members {
		eps = append(eps, strings.TrimPrefix(m.clientURL, "http://"))
	}
	return eps
}

// stop stops every member started: SIGTERM, then SIGKILL for one that has
// not exited within etcdStopTimeout.
func (c *cluster) stop() {
	for _, m := range c.members {
		if m.cmd == nil {
			continue
		}
		m.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-m.exited:
		case <-time.After(etcdStopTimeout):
			m.cmd.Process.Kill()
			<-m.exited
		}
	}
}
