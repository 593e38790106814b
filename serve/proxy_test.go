package serve

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// proxyCanary is the credential of the proxy's tests: it must reach the
// upstream, and never a reply, an event or a client.
const proxyCanary = "canary-7f3a91-proxy-credential"

// putCanary stores the credential in the session's vault.
func putCanary(t *testing.T, l *liveSession) {
	t.Helper()
	if r := l.ask(t, `{"id":"put","op":"put","ref":"arca://t/cred","value":"`+proxyCanary+`"}`); !r.OK {
		t.Fatalf("put: %s %s", r.code(), r.message())
	}
}

// proxyClient talks to the proxy directly, whatever the environment says.
func proxyClient() *http.Client { return &http.Client{Transport: &http.Transport{Proxy: nil}} }

// call makes one request through the proxy and returns its status and
// body (as much as arrived, and the error that ended it early).
func call(t *testing.T, method, url string, header map[string]string, body string) (int, string, error) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := proxyClient().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

func bearer(token string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + token}
}

// credentialOf is the credential an upstream handler received.
func credentialOf(r *http.Request) string {
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
}

// proxyUpstream echoes every request but these: /echo/leak answers the
// credential split across two writes; /echo/stream writes a line, waits
// for release and writes another; /big writes 100 bytes.
func proxyUpstream(t *testing.T, release <-chan struct{}, waitedOut *atomic.Bool) *testUpstream {
	var u *testUpstream
	u = newTestUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		flush := func() { w.(http.Flusher).Flush() }
		switch r.URL.Path {
		case "/echo/leak":
			c := credentialOf(r)
			w.Header().Set("X-Leak", "token="+c)
			io.WriteString(w, "before "+c[:8])
			flush()
			io.WriteString(w, c[8:]+" after")
		case "/echo/stream":
			io.WriteString(w, "first\n")
			flush()
			select {
			case <-release:
			case <-time.After(30 * time.Second): // a deadline to fail by, not an order
				waitedOut.Store(true)
			}
			io.WriteString(w, "second\n")
		case "/big":
			io.WriteString(w, strings.Repeat("x", 100))
		default:
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(u.requests()[len(u.requests())-1])
		}
	})
	return u
}

// TestProxy drives a session's proxy end to end against an HTTPS upstream
// of its own CA: the credential arrives and the token does not; what comes
// back is scrubbed and streamed; requests without the session's current
// token, or with a path that is not clean, never reach upstream; stop
// closes the listener; every request is one event, in order, via proxy,
// and neither the credential nor a token is on the audit wire.
func TestProxy(t *testing.T) {
	release, waitedOut := make(chan struct{}), &atomic.Bool{}
	u := proxyUpstream(t, release, waitedOut)
	toml := u.serviceTOML("echo", `credential = "arca://t/cred"
auth = "bearer"
methods = ["GET", "POST"]
paths = ["/echo", "/echo/*", "/repos/*"]`) +
		u.serviceTOML("keyed", `credential = "arca://t/cred"
auth = "query"
query_param = "key"
paths = ["/echo/*"]`) +
		u.serviceTOML("capped", `credential = "arca://t/cred"
auth = "bearer"
paths = ["/big"]
max_response_bytes = 16`)
	f := newFixtureConfig(t, toml)
	l := f.live(t)
	putCanary(t, l)
	var want []string // the proxy's events, in order, as summary writes them

	for _, c := range []struct{ line, msg string }{
		{`{"id":"p1","op":"proxy","services":["echo","nope"]}`, `unknown service "nope" (configured: capped, echo, keyed)`},
		{`{"id":"p2","op":"proxy","services":["echo"],"stop":true}`, "not both"},
		{`{"id":"p3","op":"proxy"}`, "services is required"},
		{`{"id":"p4","op":"proxy","services":"echo"}`, "array of service names"},
		{`{"id":"p4b","op":"proxy","services":["echo"],"env":"nope"}`, `unknown env "nope"`},
	} {
		if r := l.ask(t, c.line); r.code() != "bad_request" || !strings.Contains(r.message(), c.msg) {
			t.Errorf("%s: %s %q, want bad_request %q", c.line, r.code(), r.message(), c.msg)
		}
	}
	o := l.openProxy(t, `"p5"`, "echo")
	base := o.BaseURLs["echo"]
	if !regexp.MustCompile(`^http://127\.0\.0\.1:[0-9]+/echo$`).MatchString(base) || len(o.BaseURLs) != 1 {
		t.Fatalf("base URLs %v", o.BaseURLs)
	}
	if exp, err := time.Parse(time.RFC3339Nano, o.ExpiresAt); err != nil || exp.Sub(time.Now()) < 7*time.Hour || exp.Sub(time.Now()) > 8*time.Hour {
		t.Errorf("expires_at %q, want 8 hours from now", o.ExpiresAt)
	}

	// The credential arrives, the token does not; the echo of it is scrubbed.
	status, body, _ := call(t, "GET", base+"/echo/hello?x=1", map[string]string{"Authorization": "Bearer " + o.Token, "X-Test": "a"}, "")
	want = append(want, "ok 200 /echo/hello")
	got := u.requests()[len(u.requests())-1]
	if got.Path != "/echo/hello" || !slices.Equal(got.Query["x"], []string{"1"}) || !slices.Equal(got.Header["X-Test"], []string{"a"}) {
		t.Errorf("upstream received %+v", got)
	}
	if !slices.Equal(got.Header["Authorization"], []string{"Bearer " + proxyCanary}) {
		t.Errorf("upstream did not receive the credential as a bearer token") // the positive control of the canary
	}
	if !slices.Equal(got.Header["Accept-Encoding"], []string{"identity"}) {
		t.Errorf("upstream was asked for encoding %q", got.Header["Accept-Encoding"])
	}
	for k, vs := range got.Header {
		if strings.Contains(strings.Join(vs, " "), o.Token) {
			t.Errorf("upstream received the session's token in %s", k)
		}
	}
	if status != 200 || strings.Contains(body, proxyCanary) || !strings.Contains(body, "Bearer <redacted:t/cred>") {
		t.Errorf("GET: %d, body not scrubbed of the credential: %d bytes", status, len(body))
	}

	status, body, _ = call(t, "POST", base+"/echo/post", bearer(o.Token), "payload")
	want = append(want, "ok 200 /echo/post")
	if got := u.requests()[len(u.requests())-1]; status != 200 || got.Body != "payload" || got.Method != "POST" {
		t.Errorf("POST: %d, upstream received %s %q", status, got.Method, got.Body)
	}

	resp, err := proxyClient().Do(mustRequest(t, "GET", base+"/echo/leak", bearer(o.Token)))
	if err != nil {
		t.Fatal(err)
	}
	leaked, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want = append(want, "ok 200 /echo/leak")
	if resp.StatusCode != 200 || string(leaked) != "before <redacted:t/cred> after" || resp.Header.Get("X-Leak") != "token=<redacted:t/cred>" {
		t.Errorf("leak: %d, %d bytes, the body or a header not the credential redacted", resp.StatusCode, len(leaked))
	}

	// A long answer streams: the first line arrives before the upstream writes the second.
	resp, err = proxyClient().Do(mustRequest(t, "GET", base+"/echo/stream", bearer(o.Token)))
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	first, _ := br.ReadString('\n')
	close(release)
	rest, _ := io.ReadAll(br)
	resp.Body.Close()
	want = append(want, "ok 200 /echo/stream")
	if first != "first\n" || string(rest) != "second\n" || waitedOut.Load() {
		t.Errorf("stream: %q then %q (upstream waited out: %v), want each line as it is written", first, rest, waitedOut.Load())
	}

	// Without the token, or with something else where it goes: 401, never upstream.
	seen := len(u.requests())
	for _, h := range []map[string]string{
		nil,
		bearer("not-the-token"),
		{"Authorization": "Basic dXNlcjpwYXNz"},
		{"Authorization": "Bearer " + proxyCanary},
	} {
		status, body, _ := call(t, "GET", base+"/echo/x", h, "")
		want = append(want, "denied denied")
		if status != 401 || !strings.Contains(body, `"code":"unauthorized"`) {
			t.Errorf("headers %v: %d %s, want 401", h, status, body)
		}
	}
	// Paths that are not clean are denied, however spelled.
	for _, p := range []string{"/echo/repos/../admin", "/echo//evil.example/x", "/echo/%2e%2e/", "/echo/repos/%2F..", "/echo/repos/%2e%2e/admin"} {
		if status := rawRequest(t, base, "GET", p, bearer(o.Token)); status != 403 {
			t.Errorf("GET %s: %d, want 403", p, status)
		}
		want = append(want, "denied denied "+strings.TrimPrefix(p, "/echo")) // the path asked for, as asked
	}
	// A header that carries credentials is refused; a name not served is 404.
	if status, _, _ := call(t, "GET", base+"/echo/x", map[string]string{"Authorization": "Bearer " + o.Token, "Cookie": "a=b"}, ""); status != 400 {
		t.Errorf("a Cookie: %d, want 400", status)
	}
	want = append(want, "bad_request bad_request /echo/x")
	if status, _, _ := call(t, "GET", strings.TrimSuffix(base, "/echo")+"/capped/big", bearer(o.Token), ""); status != 404 {
		t.Errorf("a service not opened: %d, want 404", status)
	}
	if n := len(u.requests()); n != seen {
		t.Errorf("%d refused requests reached upstream", n-seen)
	}

	// Another session's token is not this one's.
	l2 := newFixtureConfig(t, toml).live(t)
	o2 := l2.openProxy(t, `"q1"`, "echo")
	if status, _, _ := call(t, "GET", base+"/echo/x", bearer(o2.Token), ""); status != 401 {
		t.Errorf("another session's token: %d, want 401", status)
	}
	want = append(want, "denied denied")
	if status, _, _ := call(t, "GET", o2.BaseURLs["echo"]+"/echo/x", bearer(o.Token), ""); status != 401 {
		t.Errorf("this session's token at another's proxy: %d, want 401", status)
	}
	tr2 := l2.end()
	if evs := proxyEvents(t, tr2); len(evs) != 1 || summary(evs[0]) != "denied denied" {
		t.Errorf("the other session's proxy events: %v", evs)
	}

	// A second proxy op: a new token for all the services, on the same port.
	o3 := l.openProxy(t, `"p6"`, "keyed", "capped")
	if o3.BaseURLs["echo"] != base || len(o3.BaseURLs) != 3 || o3.Token == o.Token {
		t.Errorf("reissued: %v, token changed: %v", o3.BaseURLs, o3.Token != o.Token)
	}
	if status, _, _ := call(t, "GET", base+"/echo/x", bearer(o.Token), ""); status != 401 {
		t.Errorf("the token before: %d, want 401", status)
	}
	want = append(want, "denied denied")
	if status, _, _ := call(t, "GET", base+"/echo/x", bearer(o3.Token), ""); status != 200 {
		t.Errorf("the new token: %d, want 200", status)
	}
	want = append(want, "ok 200 /echo/x")
	status, body, _ = call(t, "GET", o3.BaseURLs["keyed"]+"/echo/q?x=1&key="+o3.Token, nil, "")
	want = append(want, "ok 200 /echo/q")
	if got := u.requests()[len(u.requests())-1]; status != 200 || !slices.Equal(got.Query["key"], []string{proxyCanary}) || !slices.Equal(got.Query["x"], []string{"1"}) {
		t.Errorf("auth query: %d, upstream query keys %d", status, len(got.Query))
	}
	if strings.Contains(body, proxyCanary) || strings.Contains(body, o3.Token) {
		t.Errorf("auth query: the body holds the credential or the token")
	}
	// A body past the service's cap is cut, and the client told so.
	if status, body, err := call(t, "GET", o3.BaseURLs["capped"]+"/big", bearer(o3.Token), ""); status != 200 || len(body) > 16 || err == nil {
		t.Errorf("capped: %d, %d bytes, %v; want at most 16 and the response cut", status, len(body), err)
	}
	want = append(want, "ok 200 /big")

	// A real curl through it.
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Fatalf("curl is not installed: %v", err)
	}
	out, err := exec.Command(curl, "-sS", "--noproxy", "*", "-H", "Authorization: Bearer "+o3.Token, base+"/echo/curl").Output()
	want = append(want, "ok 200 /echo/curl")
	if err != nil || strings.Contains(string(out), proxyCanary) || !strings.Contains(string(out), `"/echo/curl"`) || !strings.Contains(string(out), "<redacted:t/cred>") {
		t.Errorf("curl: %v, its output not the scrubbed echo (%d bytes)", err, len(out))
	}

	if r := l.ask(t, `{"id":"p7","op":"proxy","stop":true}`); !r.OK || string(r.Result) != `{"stopped":true}` {
		t.Errorf("stop: %s %s", r.Result, r.message())
	}
	if _, err := proxyClient().Do(mustRequest(t, "GET", base+"/echo/x", bearer(o3.Token))); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("after stop: %v, want the connection refused", err)
	}

	tr := l.end()
	var gotEvents []string
	for _, e := range proxyEvents(t, tr) {
		gotEvents = append(gotEvents, summary(e))
		if e["op"] != "http" || e["service"] == nil {
			t.Errorf("event %v: want op http and the service", e)
		}
		if e["path"] == "/echo/leak" && e["redactions"] != float64(2) {
			t.Errorf("the leak's event counts %v redactions, want 2 (a header and the body)", e["redactions"])
		}
	}
	if !slices.Equal(gotEvents, want) {
		t.Errorf("proxy events:\n%s\nwant:\n%s", strings.Join(gotEvents, "\n"), strings.Join(want, "\n"))
	}
	for _, secret := range []string{proxyCanary, o.Token, o2.Token, o3.Token} {
		if strings.Contains(string(tr.rawErr), secret) || strings.Contains(string(tr2.rawErr), secret) {
			t.Errorf("the audit wire holds the credential or a token")
		}
	}
	if strings.Contains(string(tr.rawOut), proxyCanary) {
		t.Errorf("stdout holds the credential")
	}
	if !strings.Contains(string(tr.rawErr), `"message":"proxy stopped"`) {
		t.Errorf("no event says the proxy stopped")
	}
}

func mustRequest(t *testing.T, method, url string, header map[string]string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return req
}

// TestProxyClosedBeforeStop: a request through the proxy still in flight
// when serve ends is cancelled, and its event comes before the stop event.
func TestProxyClosedBeforeStop(t *testing.T) {
	arrived := make(chan struct{})
	u := newTestUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-r.Context().Done()
	})
	f := newFixtureConfig(t, u.serviceTOML("slow", "credential = \"arca://t/cred\"\nauth = \"bearer\"\npaths = [\"/*\"]"))
	l := f.live(t)
	putCanary(t, l)
	o := l.openProxy(t, `"p"`, "slow")
	req := mustRequest(t, "GET", o.BaseURLs["slow"]+"/wait", bearer(o.Token))
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := proxyClient().Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	<-arrived
	tr := l.end()
	<-done
	es := tr.events(t)
	evs := proxyEvents(t, tr)
	if len(evs) != 1 || evs[0]["path"] != "/wait" || len(es) < 2 || es[len(es)-2].Event != "error" || es[len(es)-1].Event != "stop" {
		t.Errorf("want the request's event, then stop: %q", tr.stderr)
	}
}
