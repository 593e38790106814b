package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
)

// useToken is the credential the uses are made with: a canary, never to
// be seen in a result.
const useToken = "tok-3f9a7c1e-canary"

// useHome is a home with the credential stored, a service echo on a local
// HTTP server that answers with what it received (the credential serve
// injects comes back in the body, for scrub), a service down on a port
// nothing listens on, and an action hello that prints the credential and
// its argument.
func useHome(t *testing.T) Options {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{"method": r.Method, "url": r.URL.RequestURI(),
			"authorization": r.Header.Get("Authorization"), "test": r.Header.Get("X-Test"), "body": string(body)})
	}))
	t.Cleanup(srv.Close)
	down, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	downURL := "http://" + down.Addr().String()
	down.Close() // nothing listens there now
	o := home(t, fmt.Sprintf(`[services.echo]
base_url = %q
credential = "arca://app/token"
auth = "bearer"
methods = ["GET", "POST"]
paths = ["/*"]
allow_private = true

[services.down]
base_url = %q
credential = "arca://app/token"
auth = "bearer"
paths = ["/*"]
allow_private = true

[actions.hello]
argv = ["sh", "-c", "printf '%%s:%%s' \"$TOKEN\" \"$1\"", "hello"]
args = "^[a-z]+$"
env = { TOKEN = "arca://app/token" }
`, srv.URL, downURL))
	put := exec.Command(arcaBin, "--config", o.Config, "put", "arca://app/token")
	put.Env, put.Dir, put.Stdin = o.Environ, o.Dir, strings.NewReader(useToken)
	if out, err := put.CombinedOutput(); err != nil {
		t.Fatalf("arca put: %v: %s", err, out)
	}
	return o
}

// http against a real serve: the credential reaches the upstream and
// comes back scrubbed; a service that cannot be reached is
// upstream_failed with its cause; an unknown one bad_request.
func TestHTTPAgainstServe(t *testing.T) {
	c := start(t, useHome(t))
	ctx := context.Background()
	h, err := c.HTTP(ctx, Request{Service: "echo", Method: "POST", Path: "/repos/x",
		Query: map[string][]string{"q": {"1", "2"}, "r": {"x"}}, Headers: map[string]string{"X-Test": "y"}, Body: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if h.Service != "echo" || h.Status != 200 || h.Truncated {
		t.Errorf("http: service %q, status %d, truncated %v", h.Service, h.Status, h.Truncated)
	}
	if fmt.Sprint(h.Redactions) != "[{1 arca://app/token}]" {
		t.Errorf("redactions %v", h.Redactions)
	}
	if strings.Contains(fmt.Sprintf("%+v", h), useToken) {
		t.Fatal("the result holds the credential")
	}
	var echoed map[string]string
	if err := json.Unmarshal([]byte(h.Body), &echoed); err != nil {
		t.Fatalf("the body is not what the upstream wrote: %v", err)
	}
	want := map[string]string{"method": "POST", "url": "/repos/x?q=1&q=2&r=x", "authorization": "Bearer <redacted:app/token>", "test": "y", "body": "hello"}
	if fmt.Sprint(echoed) != fmt.Sprint(want) {
		t.Errorf("the upstream received %v, want %v", echoed, want)
	}
	_, err = c.HTTP(ctx, Request{Service: "down", Method: "GET", Path: "/"})
	var e *Error
	if !errors.As(err, &e) || e.Code != "upstream_failed" || e.Cause != "connect" {
		t.Errorf("a service nothing listens for: %#v, want upstream_failed with cause connect", err)
	}
	_, err = c.HTTP(ctx, Request{Service: "nope", Method: "GET", Path: "/"})
	wantCode(t, "an unknown service", err, "bad_request")
}

// exec against a real serve: the credential in the child's environment,
// its output scrubbed; an argument the action does not allow refused.
func TestExecAgainstServe(t *testing.T) {
	c := start(t, useHome(t))
	ctx := context.Background()
	x, err := c.Exec(ctx, Request{Action: "hello", Args: []string{"abc"}})
	if err != nil {
		t.Fatal(err)
	}
	if x.Action != "hello" || x.ExitCode != 0 || x.Stdout != "<redacted:app/token>:abc" || x.Truncated != (ExecTruncated{}) {
		t.Errorf("exec: %+v", x)
	}
	if fmt.Sprint(x.Redactions) != "[{1 arca://app/token}]" {
		t.Errorf("redactions %v", x.Redactions)
	}
	_, err = c.Exec(ctx, Request{Action: "hello", Args: []string{"ABC"}})
	wantCode(t, "an argument the action does not allow", err, "bad_request")
}

// proxy against a real serve: a base URL per service; a request without
// the token is 401, one with it reaches the upstream with the credential
// in its place (scrubbed on the way back); stop closes it.
func TestProxyAgainstServe(t *testing.T) {
	c := start(t, useHome(t))
	ctx := context.Background()
	p, err := c.Proxy(ctx, Request{Services: []string{"echo"}})
	if err != nil {
		t.Fatal(err)
	}
	base, ok := p.BaseURLs["echo"]
	if !ok || !strings.HasPrefix(base, "http://127.0.0.1:") || p.Token == "" {
		t.Fatalf("proxy: base URLs %v, a token of %d bytes", p.BaseURLs, len(p.Token))
	}
	url := strings.TrimSuffix(base, "/") + "/repos/x"
	direct := &http.Client{Transport: &http.Transport{Proxy: nil}}
	get := func(token string) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		return direct.Do(req)
	}
	resp, err := get("")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without the token: %s, want 401", resp.Status)
	}
	resp, err = get(p.Token)
	if err != nil {
		t.Fatal(err)
	}
	var echoed map[string]string
	err = json.NewDecoder(resp.Body).Decode(&echoed)
	resp.Body.Close()
	if err != nil || echoed["url"] != "/repos/x" || echoed["authorization"] != "Bearer <redacted:app/token>" {
		t.Errorf("through the proxy: %s, %v, the upstream received %v", resp.Status, err, echoed)
	}
	stop := true
	if s, err := c.Proxy(ctx, Request{Stop: &stop}); err != nil || !s.Stopped {
		t.Fatalf("stop: %+v, %v", s, err)
	}
	if resp, err := get(p.Token); err == nil {
		resp.Body.Close()
		t.Errorf("after stop: %s, want no proxy", resp.Status)
	}
}
