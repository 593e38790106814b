package launch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// logTailLines is how many lines of a member's log a failure shows.
const logTailLines = 30

// Member is one etcd server process of a Cluster.
type Member struct {
	Name      string
	ClientURL string // "http://127.0.0.1:PORT"

	cluster *Cluster
	peerURL string   // "http://127.0.0.1:PORT"
	dataDir string   // etcd's --data-dir
	logPath string   // etcd's log, and its stdout and stderr
	bin     string   // the etcd binary
	args    []string // every start runs bin with these

	cmd    *exec.Cmd
	exited chan struct{} // closed once cmd has been waited for
	alive  bool          // started and not killed since
}

// newMember returns member name of c, living in dir/name, with its client
// and peer URLs on the given loopback ports. It is not started.
func newMember(c *Cluster, bin, dir, name string, clientPort, peerPort int) *Member {
	m := &Member{
		Name:      name,
		ClientURL: "http://127.0.0.1:" + strconv.Itoa(clientPort),
		cluster:   c,
		peerURL:   "http://127.0.0.1:" + strconv.Itoa(peerPort),
		dataDir:   filepath.Join(dir, name, "data"),
		logPath:   filepath.Join(dir, name, "etcd.log"),
		bin:       bin,
	}
	m.args = []string{
		"--name=" + m.Name,
		"--data-dir=" + m.dataDir,
		"--listen-client-urls=" + m.ClientURL,
		"--advertise-client-urls=" + m.ClientURL,
		"--listen-peer-urls=" + m.peerURL,
		"--initial-advertise-peer-urls=" + m.peerURL,
		"--logger=zap",
		"--log-outputs=" + m.logPath,
		"--heartbeat-interval=100",
		"--election-timeout=1000",
	}
	return m
}

// Endpoint is m's client endpoint as "127.0.0.1:PORT".
func (m *Member) Endpoint() string {
	return strings.TrimPrefix(m.ClientURL, "http://")
}

// Pid is the process ID of m, or 0 when m is not running.
func (m *Member) Pid() int {
	if !m.Running() {
		return 0
	}
	return m.cmd.Process.Pid
}

// LogPath is the file etcd logs to, and writes its stdout and stderr to.
func (m *Member) LogPath() string { return m.logPath }

// Running reports whether m was started, not killed, and has not exited.
func (m *Member) Running() bool {
	if !m.alive {
		return false
	}
	select {
	case <-m.exited:
		return false
	default:
		return true
	}
}

// Kill stops m with SIGKILL and waits for the process to exit.
func (m *Member) Kill() error {
	if !m.alive {
		return errors.New("not running")
	}
	return m.kill()
}

// Restart starts the stopped member m again, on the same ports and data dir;
// etcd ignores the initial-cluster flags of a member that has data. If a
// majority of the cluster is running with m, Restart returns when m answers
// a linearizable read, that is when m has rejoined the cluster and a leader
// exists. Otherwise (the first members restarted after the whole cluster
// was killed) no member can answer anything yet, and Restart returns once
// m's client port accepts connections; ask Cluster.Leader once enough
// members are back. On failure m is killed again, and the error has the
// tail of m's log.
func (m *Member) Restart(ctx context.Context) error {
	if m.Running() {
		return errors.New("still running")
	}
	if err := m.start(); err != nil {
		return err
	}
	needLeader := m.cluster.running() > len(m.cluster.Members)/2
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	if err := waitReady(ctx, []*Member{m}, needLeader); err != nil {
		return errors.Join(err, m.kill())
	}
	return nil
}

// start starts m's process, with its output appended to m's log.
func (m *Member) start() error {
	if err := os.MkdirAll(filepath.Dir(m.logPath), 0o755); err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	logf, err := os.OpenFile(m.logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	defer logf.Close() // the child has its own copy
	cmd := exec.Command(m.bin, m.args...)
	cmd.Env = etcdEnv(os.Environ())
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("etcd: starting member %s: %w", m.Name, err)
	}
	m.cmd, m.exited, m.alive = cmd, make(chan struct{}), true
	go func(exited chan<- struct{}) {
		cmd.Wait() // the exit status of a killed etcd says nothing
		close(exited)
	}(m.exited)
	return nil
}

// etcdEnv is env without etcd's ETCD_* configuration variables, so the
// environment of the test cannot change the members' configuration. On an
// architecture etcd 3.4 does not support officially it allows etcd to run.
func etcdEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "ETCD_") {
			out = append(out, kv)
		}
	}
	if runtime.GOARCH != "amd64" {
		out = append(out, "ETCD_UNSUPPORTED_ARCH="+runtime.GOARCH)
	}
	return out
}

// kill sends SIGKILL to m's process and waits until it has exited.
func (m *Member) kill() error {
	m.alive = false
	if err := m.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("killing member %s (pid %d): %w", m.Name, m.cmd.Process.Pid, err)
	}
	select {
	case <-m.exited:
		return nil
	case <-time.After(killTimeout):
		return fmt.Errorf("member %s (pid %d) still running %v after SIGKILL", m.Name, m.cmd.Process.Pid, killTimeout)
	}
}

// ready returns nil if m answers a linearizable Get, or, when needLeader is
// false, if m's client port accepts connections: etcd 3.4 accepts them as
// soon as it starts but answers no request, not even Status, until it has
// joined the cluster through a leader.
func (m *Member) ready(ctx context.Context, needLeader bool) error {
	ctx, cancel := m.untilExit(ctx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	// Dial first even when a Get follows: a gRPC client refused once waits
	// a second before its next try, longer than etcd takes to start.
	if err := m.dial(ctx); err != nil || !needLeader {
		return err
	}
	cli, err := NewClient(m.ClientURL)
	if err != nil {
		return err
	}
	defer cli.Close()
	_, err = cli.Get(ctx, "etcdtest/ready")
	return err
}

// dial returns nil if m's client port accepts a TCP connection.
func (m *Member) dial(ctx context.Context) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", m.Endpoint())
	if err != nil {
		return err
	}
	return conn.Close()
}

// untilExit returns a copy of ctx that is also done once m's process has
// exited, so that a request to a dead member does not wait for its timeout.
func (m *Member) untilExit(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func(exited <-chan struct{}) {
		select {
		case <-exited:
			cancel()
		case <-ctx.Done():
		}
	}(m.exited)
	return ctx, cancel
}

// status asks m for its Status.
func (m *Member) status(ctx context.Context) (*clientv3.StatusResponse, error) {
	cli, err := NewClient(m.ClientURL)
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	return cli.Status(ctx, m.ClientURL)
}

// failure describes m failing to start for reason, with the tail of its
// log. If m's log says a port was in use, the error wraps ErrPortTaken.
func (m *Member) failure(reason string, err error) error {
	if err != nil {
		reason += ": " + err.Error()
	}
	tail := logTail(m.logPath, logTailLines)
	msg := fmt.Sprintf("member %s (client %s, peer %s) %s; last lines of %s:\n%s",
		m.Name, m.ClientURL, m.peerURL, reason, m.logPath, tail)
	if strings.Contains(tail, "address already in use") {
		return fmt.Errorf("%w: %s", ErrPortTaken, msg)
	}
	return errors.New(msg)
}

// logTail returns the last n lines of the file at path, or why it cannot.
func logTail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	const max = 16 << 10
	if fi, err := f.Stat(); err == nil && fi.Size() > max {
		f.Seek(fi.Size()-max, io.SeekStart)
	}
	b, err := io.ReadAll(io.LimitReader(f, max)) // the log may grow meanwhile
	if err != nil {
		return err.Error()
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
