// Package pdptest runs the real policy engines the PDP tests drive: the
// opa binary the test suite installs (scripts/test.sh), as `opa eval` or
// as a server.
package pdptest

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// OPA is the path of the opa binary: on PATH, else in $(go env GOPATH)/bin.
// Its absence fails the test: the suite installs it.
func OPA(tb testing.TB) string {
	tb.Helper()
	if p, err := exec.LookPath("opa"); err == nil {
		return p
	}
	out, err := exec.Command("go", "env", "GOPATH").Output()
	if err == nil {
		p := filepath.Join(strings.TrimSpace(string(out)), "bin", "opa")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	tb.Fatal("opa is not installed: run scripts/test.sh, or go install github.com/open-policy-agent/opa@v1.22.4")
	return ""
}

// FreeAddr is a loopback address nothing listens on.
func FreeAddr(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// StartOPAServer runs `opa run --server` with policy on addr (host:port,
// or unix://PATH), waits until it is healthy, and stops it, with its
// process group, when the test ends.
func StartOPAServer(tb testing.TB, addr, policy string) {
	tb.Helper()
	cmd := exec.Command(OPA(tb), "run", "--server", "--skip-version-check", "--log-level", "error", "--addr", addr, policy)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	client := &http.Client{Timeout: time.Second}
	base := "http://" + addr
	if sock, ok := strings.CutPrefix(addr, "unix://"); ok {
		client.Transport = &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		}}
		base = "http://localhost"
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		resp, err := client.Get(base + "/health")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			tb.Fatalf("opa did not become healthy on %s: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
