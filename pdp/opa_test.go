package pdp

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

// opaBinary finds the opa the test suite needs (scripts/test.sh installs
// it): on PATH, else in $(go env GOPATH)/bin. Its absence fails the test.
func opaBinary(tb testing.TB) string {
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

// freeAddr is a loopback address nothing listens on.
func freeAddr(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startOPA runs `opa run --server` on addr (host:port, or unix://path)
// with testdata/opa/policy.rego, waits until it is healthy, and stops it
// when the test ends.
func startOPA(tb testing.TB, addr string) {
	tb.Helper()
	policy, err := filepath.Abs("testdata/opa/policy.rego")
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(opaBinary(tb), "run", "--server", "--skip-version-check", "--log-level", "error",
		"--addr", addr, policy)
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
	deadline := time.Now().Add(30 * time.Second)
	for {
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

var (
	ciGet   = Request{Actor: "agent:ci", Attestation: "job-7781", Op: "get", Env: "dev", Ref: "app/db"}
	prodGet = Request{Actor: "agent:ci", Op: "get", Env: "prod", Ref: "app/db"}
)

// TestOPAServer drives a real `opa run --server` through its REST data
// API: the policy's verdict object, its bare boolean, and an undefined
// path, over TCP and over a unix socket.
func TestOPAServer(t *testing.T) {
	addr := freeAddr(t)
	startOPA(t, addr)
	sock := filepath.Join(t.TempDir(), "opa.sock")
	startOPA(t, "unix://"+sock)
	type want struct {
		req Request
		v   *Verdict
		why string
	}
	for _, c := range []struct {
		url, path string
		wants     []want
	}{
		{url: "http://" + addr + "/v1/data/arca/decision", wants: []want{
			{req: ciGet, v: allow("agent:ci may read dev")},
			{req: prodGet, v: deny("no rule allows this")},
			{req: Request{Op: "list", Env: "dev"}, v: deny("no rule allows this")},
		}},
		{url: "http://" + addr + "/v1/data/arca/allow", wants: []want{
			{req: ciGet, v: allow("")},
			{req: prodGet, v: deny("")},
		}},
		{url: "http://" + addr + "/v1/data/arca/no_such_rule", wants: []want{
			{req: ciGet, why: "opa result is undefined"},
		}},
		{url: "http://" + addr + "/v1/data/arca/reason", wants: []want{
			{req: ciGet, why: "opa result is neither a verdict object nor a boolean"},
		}},
		{url: "unix:" + sock, path: "/v1/data/arca/decision", wants: []want{
			{req: ciGet, v: allow("agent:ci may read dev")},
			{req: prodGet, v: deny("no rule allows this")},
		}},
	} {
		d := New(Config{URL: c.url, HTTPPath: c.path, API: APIOPA, Timeout: 10 * time.Second})
		for _, w := range c.wants {
			v, err := d.Decide(context.Background(), w.req)
			if w.v == nil {
				wantUnreachable(t, err, w.why)
				continue
			}
			if err != nil || !reflect.DeepEqual(v, *w.v) {
				t.Errorf("%s %+v: verdict %+v, err %v; want %+v", c.url, w.req, v, err, *w.v)
			}
		}
		d.Close()
	}
}
