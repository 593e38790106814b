package serve

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/arca-secrets/arca/ops/upstream/upstreamtest"
)

// A live session is driven a line at a time: a request is sent once the
// reply before it was read, so a test can use what a reply handed out (the
// proxy's base URLs and token) before it sends the next line.
type liveSession struct {
	in    *io.PipeWriter
	out   chan string
	done  chan transcript
	ended bool
	tr    transcript
}

// live starts a session on f's config whose stdin the test writes.
func (f *fixture) live(t *testing.T) *liveSession { return f.liveIn(t, nil) }

// liveIn is live in a process environment of environ.
func (f *fixture) liveIn(t *testing.T, environ []string) *liveSession {
	t.Helper()
	pr, pw := io.Pipe()
	l := &liveSession{in: pw, out: make(chan string, 64), done: make(chan transcript, 1)}
	go func() {
		l.done <- f.session(t, sessionOpts{stdin: pr, stdout: &lineChan{ch: l.out}, environ: environ})
	}()
	t.Cleanup(func() { l.end() })
	return l
}

// ask sends one request line and returns its reply.
func (l *liveSession) ask(t *testing.T, line string) response {
	t.Helper()
	if _, err := io.WriteString(l.in, line+"\n"); err != nil {
		t.Fatalf("sending %s: %v", line, err)
	}
	var r response
	if err := json.Unmarshal([]byte(<-l.out), &r); err != nil {
		t.Fatalf("reply to %s: %v", line, err)
	}
	return r
}

// end closes stdin and returns what the session wrote.
func (l *liveSession) end() transcript {
	if !l.ended {
		l.ended = true
		l.in.Close()
		l.tr = <-l.done
	}
	return l.tr
}

// lineChan hands each whole line written to it to ch.
type lineChan struct {
	mu  sync.Mutex
	buf []byte
	ch  chan<- string
}

func (w *lineChan) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		w.ch <- string(w.buf[:i])
		w.buf = w.buf[i+1:]
	}
}

// opened is a proxy result.
type opened struct {
	BaseURLs  map[string]string `json:"base_urls"`
	Token     string            `json:"token"`
	ExpiresAt string            `json:"expires_at"`
	Stopped   bool              `json:"stopped"`
}

// openProxy asks for the proxy of services and returns its result.
func (l *liveSession) openProxy(t *testing.T, id string, services ...string) opened {
	t.Helper()
	names, _ := json.Marshal(services)
	r := l.ask(t, fmt.Sprintf(`{"id":%s,"op":"proxy","services":%s}`, id, names))
	if !r.OK {
		t.Fatalf("proxy %s: %s %s", names, r.code(), r.message())
	}
	var o opened
	if err := json.Unmarshal(r.Result, &o); err != nil || o.Token == "" || len(o.BaseURLs) == 0 {
		t.Fatalf("proxy %s: result %s (%v)", names, r.Result, err)
	}
	return o
}

// received is what the test upstream received of one request.
type received struct {
	Method  string              `json:"method"`
	Path    string              `json:"path"`
	RawPath string              `json:"raw_path"`
	Query   map[string][]string `json:"query"`
	Header  map[string][]string `json:"header"`
	Body    string              `json:"body"`
}

// testUpstream is an HTTPS server of its own CA (written to caFile, for
// tls_ca) that records what it receives and answers through handle.
type testUpstream struct {
	*httptest.Server
	caFile string
	mu     sync.Mutex
	seen   []received
}

// newTestUpstream starts one. handle nil: every request is echoed as
// JSON (its headers too: the credential among them).
func newTestUpstream(t *testing.T, handle http.HandlerFunc) *testUpstream {
	t.Helper()
	u := &testUpstream{}
	u.Server, u.caFile = upstreamtest.StartTLS(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		e := received{Method: r.Method, Path: r.URL.Path, RawPath: r.URL.EscapedPath(), Query: r.URL.Query(), Header: r.Header, Body: string(body)}
		r.Body = io.NopCloser(bytes.NewReader(body))
		u.mu.Lock()
		u.seen = append(u.seen, e)
		u.mu.Unlock()
		if handle != nil {
			handle(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(e)
	}))
	return u
}

// requests returns what u received so far.
func (u *testUpstream) requests() []received {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]received(nil), u.seen...)
}

// serviceTOML is a [services.NAME] table for u: its CA, private
// addresses allowed (u is on loopback), and more lines as given.
func (u *testUpstream) serviceTOML(name, more string) string {
	return fmt.Sprintf("[services.%s]\nbase_url = %s\ntls_ca = %s\nallow_private = true\n%s\n",
		name, quoteTOML(u.URL), quoteTOML(u.caFile), more)
}

// rawRequest sends one HTTP/1.1 request as written, the path untouched by
// any client, and returns the response's status.
func rawRequest(t *testing.T, base, method, path string, header map[string]string) int {
	t.Helper()
	host, _, _ := strings.Cut(strings.TrimPrefix(base, "http://"), "/")
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatalf("dial %s: %v", host, err)
	}
	defer conn.Close()
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n", method, path, host)
	for k, v := range header {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	b.WriteString("\r\n")
	if _, err := io.WriteString(conn, b.String()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// proxyEvents returns the events of requests through the proxy, in order.
func proxyEvents(t *testing.T, tr transcript) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range tr.stderr {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("event %s: %v", l, err)
		}
		if m["via"] == "proxy" {
			out = append(out, m)
		}
	}
	return out
}

// summary is an event of a use in short: outcome, code (or status) and
// path, as "ok 200 /echo/x" or "denied denied".
func summary(m map[string]any) string {
	s := fmt.Sprint(m["outcome"])
	if c, ok := m["code"]; ok {
		s += " " + fmt.Sprint(c)
	}
	if st, ok := m["status"]; ok {
		s += fmt.Sprintf(" %v", st)
	}
	if p, ok := m["path"]; ok {
		s += " " + fmt.Sprint(p)
	}
	return s
}
