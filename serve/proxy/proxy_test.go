package proxy

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/arca-secrets/arca/ops/upstream/upstreamtest"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/opstest"
	"github.com/arca-secrets/arca/vault/secret"
)

// canary is the credential: it reaches the upstream, never a client or
// an event.
const canary = "canary-51c0de-proxied-credential"

// lockedBuffer holds the audit events, written from the proxy's handlers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// fixture is a proxy on a service of its own, in front of an HTTPS
// upstream of its own CA that answers through handle, or echoes what it
// received as JSON.
type fixture struct {
	p        *Proxy
	events   *lockedBuffer
	clock    *clock
	mu       sync.Mutex
	seen     []echo // what the upstream received
	upstream *httptest.Server
}

// count is how many requests the upstream received.
func (f *fixture) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.seen)
}

// last is what the upstream received last.
func (f *fixture) last() echo {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.seen) == 0 {
		return echo{}
	}
	return f.seen[len(f.seen)-1]
}

// clock is a test's own time.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// echo is what the echo upstream received.
type echo struct {
	Header http.Header
	Query  map[string][]string
	Path   string
}

func newFixture(t testing.TB, services string, handle http.HandlerFunc, names ...string) *fixture {
	t.Helper()
	f := &fixture{}
	up, ca := upstreamtest.StartTLS(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.seen = append(f.seen, echo{Header: r.Header, Query: r.URL.Query(), Path: r.URL.Path})
		f.mu.Unlock()
		if handle != nil {
			handle(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(echo{Header: r.Header, Query: r.URL.Query(), Path: r.URL.Path})
	}))
	services = strings.ReplaceAll(services, "TLSCA", ca)
	events := &lockedBuffer{}
	toml := strings.ReplaceAll(services, "UPSTREAM", up.URL)
	o := opstest.New(t, opstest.Options{Config: toml, Audit: events})
	ctx := context.Background()
	for ref, v := range map[string]string{"arca://t/cred": canary, "arca://t/user": "ci-bot-user"} {
		if _, err := o.Service.Put(ctx, ops.Request{Ref: ref, Value: secret.New([]byte(v))}); err != nil {
			t.Fatal(err)
		}
	}
	c := &clock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	p, err := Start(Options{Service: o.Service, Services: o.Config.Services, Now: c.Now}, Grant{Services: names})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	f.p, f.events, f.clock, f.upstream = p, events, c, up
	return f
}

// service is a [services.NAME] table for the fixture's upstream.
func service(name, auth string) string {
	return fmt.Sprintf("[services.%s]\nbase_url = \"UPSTREAM\"\ntls_ca = \"TLSCA\"\ncredential = \"arca://t/cred\"\nallow_private = true\npaths = [\"/*\"]\n%s\n", name, auth)
}

// get makes one GET through the proxy with header set on it.
func get(t *testing.T, url string, header http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := (&http.Client{Transport: &http.Transport{Proxy: nil}}).Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestTokenCarriers: the token is taken where each auth kind carries the
// credential, and the credential put there in its place; nothing else
// carries it.
func TestTokenCarriers(t *testing.T) {
	f := newFixture(t, service("b", `auth = "bearer"`)+service("u", "auth = \"basic\"\nusername_ref = \"arca://t/user\"")+
		service("h", "auth = \"header\"\nheader = \"X-Api-Key\"")+service("q", "auth = \"query\"\nquery_param = \"key\""),
		nil, "b", "u", "h", "q")
	tok, urls := f.p.Token(), f.p.BaseURLs()
	basic := func(user, pass string) []string {
		return []string{"Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))}
	}
	for _, c := range []struct {
		name, url string
		good, bad http.Header
		arrived   func(e echo) bool
	}{
		{"bearer", urls["b"] + "/x", http.Header{"Authorization": {"Bearer " + tok}}, http.Header{"Authorization": {"Bearer x" + tok}},
			func(e echo) bool { return e.Header.Get("Authorization") == "Bearer "+canary }},
		{"basic", urls["u"] + "/x", http.Header{"Authorization": basic("anyone", tok)}, http.Header{"Authorization": basic(tok, "x")},
			func(e echo) bool { return e.Header.Get("Authorization") == basic("ci-bot-user", canary)[0] }},
		{"header", urls["h"] + "/x", http.Header{"X-Api-Key": {tok}}, http.Header{"Authorization": {"Bearer " + tok}},
			func(e echo) bool { return e.Header.Get("X-Api-Key") == canary }},
		{"query", urls["q"] + "/x?a=1&key=" + tok, nil, http.Header{"X-Key": {tok}},
			func(e echo) bool { return e.Query["key"][0] == canary && e.Query["a"][0] == "1" && len(e.Query) == 2 }},
	} {
		status, body := get(t, c.url, c.good)
		e := f.last()
		if status != 200 || !strings.Contains(body, "<redacted:t/cred>") || strings.Contains(body, canary) {
			t.Errorf("%s: %d, the echo not scrubbed of the credential", c.name, status)
		}
		if !c.arrived(e) {
			t.Errorf("%s: the credential did not arrive where it goes", c.name)
		}
		if strings.Contains(fmt.Sprint(e.Header, e.Query), tok) {
			t.Errorf("%s: the token went on upstream", c.name)
		}
		if status, _ := get(t, strings.Replace(c.url, "key="+tok, "key=x", 1), c.bad); status != 401 {
			t.Errorf("%s: without the token where it goes: %d, want 401", c.name, status)
		}
	}
	if ev := f.events.String(); strings.Contains(ev, canary) || strings.Contains(ev, tok) || strings.Count(ev, `"code":"denied"`) != 4 {
		t.Errorf("events: want 4 denied, and neither the credential nor the token: %d bytes", len(ev))
	}
}

// TestTokenExpires: a token is good for 8 hours from its issue; a new
// one ends the one before.
func TestTokenExpires(t *testing.T) {
	f := newFixture(t, service("b", `auth = "bearer"`), nil, "b")
	url, tok := f.p.BaseURLs()["b"]+"/x", f.p.Token()
	if !f.p.ExpiresAt().Equal(f.clock.Now().Add(8 * time.Hour)) {
		t.Errorf("expires at %v, want 8 hours after %v", f.p.ExpiresAt(), f.clock.Now())
	}
	f.clock.advance(8*time.Hour - time.Nanosecond)
	if status, _ := get(t, url, http.Header{"Authorization": {"Bearer " + tok}}); status != 200 {
		t.Errorf("before it expires: %d", status)
	}
	f.clock.advance(time.Nanosecond)
	if status, body := get(t, url, http.Header{"Authorization": {"Bearer " + tok}}); status != 401 || !strings.Contains(body, "expired") {
		t.Errorf("once expired: %d %s", status, body)
	}
	if err := f.p.Issue(Grant{Services: []string{"b"}}); err != nil {
		t.Fatal(err)
	}
	if status, _ := get(t, url, http.Header{"Authorization": {"Bearer " + tok}}); status != 401 {
		t.Errorf("the token before a new one: %d", status)
	}
	if status, _ := get(t, url, http.Header{"Authorization": {"Bearer " + f.p.Token()}}); status != 200 {
		t.Errorf("the new token: %d", status)
	}
	if err := f.p.Issue(Grant{Services: []string{"nope"}}); err == nil {
		t.Errorf("a token for a service not configured was issued")
	}
}

// TestUsesBounded: at most manifest.MaxUses requests are in flight; the
// next waits for a slot and goes once one is free.
func TestUsesBounded(t *testing.T) {
	arrived, release := make(chan struct{}), make(chan struct{})
	f := newFixture(t, service("b", `auth = "bearer"`), func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}, "b")
	waiting := make(chan struct{}, 1)
	f.p.onWait = func() { waiting <- struct{}{} }
	url, h := f.p.BaseURLs()["b"]+"/x", http.Header{"Authorization": {"Bearer " + f.p.Token()}}
	statuses := make(chan int)
	for range manifest.MaxUses + 1 {
		go func() {
			req, _ := http.NewRequest("GET", url, nil)
			req.Header = h.Clone()
			resp, err := (&http.Client{Transport: &http.Transport{Proxy: nil}}).Do(req)
			if err != nil {
				statuses <- 0
				return
			}
			resp.Body.Close()
			statuses <- resp.StatusCode
		}()
	}
	in, waited := 0, false
	for in < manifest.MaxUses || !waited {
		select {
		case <-arrived:
			in++
		case <-waiting:
			waited = true
		}
	}
	if in != manifest.MaxUses {
		t.Fatalf("%d requests in flight, want %d", in, manifest.MaxUses)
	}
	release <- struct{}{} // one ends: the one waiting goes
	<-arrived
	close(release)
	for range manifest.MaxUses + 1 {
		if s := <-statuses; s != 200 {
			t.Errorf("a request ended %d", s)
		}
	}
}

// TestCloseWaitsForRequests: Close cancels the requests in flight and
// returns once each has written its event; then nothing is accepted.
func TestCloseWaitsForRequests(t *testing.T) {
	arrived := make(chan struct{})
	f := newFixture(t, service("b", `auth = "bearer"`), func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-r.Context().Done()
	}, "b")
	url, h := f.p.BaseURLs()["b"]+"/x", http.Header{"Authorization": {"Bearer " + f.p.Token()}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		req, _ := http.NewRequest("GET", url, nil)
		req.Header = h
		if resp, err := (&http.Client{Transport: &http.Transport{Proxy: nil}}).Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	<-arrived
	f.p.Close()
	if ev := f.events.String(); !strings.Contains(ev, `"path":"/x","via":"proxy"`) {
		t.Errorf("Close returned before the request in flight wrote its event: %s", ev)
	}
	<-done
	if _, err := http.Get(url); err == nil {
		t.Errorf("the proxy answers after Close")
	}
	f.p.Close() // a second Close does nothing
}

// TestClientGoneStillAudited: a client that goes away mid-answer still
// leaves the request's one event, ok, with the bytes read from upstream.
func TestClientGoneStillAudited(t *testing.T) {
	gone := make(chan struct{})
	f := newFixture(t, service("b", `auth = "bearer"`), func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "first\n")
		w.(http.Flusher).Flush()
		<-gone
		for range 64 {
			if _, err := io.WriteString(w, strings.Repeat("x", 1<<10)); err != nil {
				return
			}
		}
	}, "b")
	req, _ := http.NewRequest("GET", f.p.BaseURLs()["b"]+"/x", nil)
	req.Header.Set("Authorization", "Bearer "+f.p.Token())
	resp, err := (&http.Client{Transport: &http.Transport{Proxy: nil}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if line, _ := bufio.NewReader(resp.Body).ReadString('\n'); line != "first\n" {
		t.Fatalf("first line %q", line)
	}
	resp.Body.Close()
	close(gone)
	f.p.Close()
	ev := f.events.String()
	if !strings.Contains(ev, `"outcome":"ok"`) || !strings.Contains(ev, `"path":"/x","via":"proxy","status":200`) {
		t.Errorf("no ok event for the request whose client went away: %s", ev)
	}
}

// TestEncodedAnswerNotPassedOn: an answer in an encoding scrub cannot
// read (upstream ignored the identity it was asked for) is not passed
// on: 502, upstream_failed, cause read.
// The encoding may hide behind an identity given first.
func TestEncodedAnswerNotPassedOn(t *testing.T) {
	for _, encs := range [][]string{{"gzip"}, {"identity", "gzip"}, {"identity, br"}} {
		f := newFixture(t, service("b", `auth = "bearer"`), func(w http.ResponseWriter, r *http.Request) {
			w.Header()["Content-Encoding"] = encs
			io.WriteString(w, "compressed "+canary)
		}, "b")
		status, body := get(t, f.p.BaseURLs()["b"]+"/x", http.Header{"Authorization": {"Bearer " + f.p.Token()}})
		if status != http.StatusBadGateway || !strings.Contains(body, `"code":"upstream_failed"`) || !strings.Contains(body, `"details":{"cause":"read"}`) ||
			strings.Contains(body, "compressed") {
			t.Errorf("an answer in %q: %d, %d bytes, want 502 upstream_failed and nothing of it", encs, status, len(body))
		}
		if ev := f.events.String(); !strings.Contains(ev, `"cause":"read"`) || !strings.Contains(ev, `"code":"upstream_failed"`) {
			t.Errorf("%q: its event is not upstream_failed, cause read", encs)
		}
	}
}

// TestRequestCleaned: what belongs to the connection to the proxy is not
// passed on (hop-by-hop headers and those Connection names, the client's
// Accept-Encoding); a body past manifest.MaxBody is 413 and never sent.
func TestRequestCleaned(t *testing.T) {
	f := newFixture(t, service("b", "auth = \"bearer\"\nmethods = [\"GET\", \"POST\"]"), nil, "b")
	url, tok := f.p.BaseURLs()["b"]+"/x", f.p.Token()
	status, _ := get(t, url, http.Header{"Authorization": {"Bearer " + tok}, "Connection": {"X-Hop"}, "X-Hop": {"1"},
		"Keep-Alive": {"timeout=5"}, "Accept-Encoding": {"gzip"}, "X-Kept": {"2"}})
	e := f.last()
	if status != 200 || e.Header.Get("X-Hop") != "" || e.Header.Get("Keep-Alive") != "" || e.Header.Get("X-Kept") != "2" ||
		e.Header.Get("Accept-Encoding") != "identity" {
		t.Errorf("%d, upstream received headers %v", status, e.Header)
	}
	seen := f.count()
	req, _ := http.NewRequest("POST", url, strings.NewReader(strings.Repeat("b", manifest.MaxBody+1)))
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := (&http.Client{Transport: &http.Transport{Proxy: nil}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || f.count() != seen {
		t.Errorf("a body past the bound: %d, upstream saw %d requests of it", resp.StatusCode, f.count()-seen)
	}
	if ev := f.events.String(); !strings.Contains(ev, `"code":"bad_request","message":"the request body is longer than`) {
		t.Errorf("no bad_request event for the body past the bound")
	}
}

// TestTokenGoesNoFurther: a request that carries the token where the
// credential goes and again in another header's value or name, the path
// or the query, decoded or not, is bad_request and never sent: the
// upstream would receive the token. A body that quotes it is content,
// and is sent.
func TestTokenGoesNoFurther(t *testing.T) {
	f := newFixture(t, service("b", "auth = \"bearer\"\nmethods = [\"GET\", \"POST\"]"), nil, "b")
	url, tok := f.p.BaseURLs()["b"], f.p.Token()
	auth := http.Header{"Authorization": {"Bearer " + tok}}
	if status, _ := get(t, url+"/x?a=1", auth); status != 200 || f.count() != 1 {
		t.Fatalf("the token where it goes: %d, want 200 and the request sent", status)
	}
	enc := strings.ReplaceAll(tok, tok[:1], fmt.Sprintf("%%%02X", tok[0]))
	for name, c := range map[string]struct {
		path   string
		header http.Header
		body   string
	}{
		"another header":    {"/x", http.Header{"X-Fwd": {"k " + tok}}, ""},
		"a header's name":   {"/x", http.Header{"X-" + tok: {"1"}}, ""},
		"the path":          {"/x/" + tok, nil, ""},
		"the path, encoded": {"/x/" + enc, nil, ""},
		"the query":         {"/x?t=" + tok, nil, ""},
		"the query encoded": {"/x?t=" + enc, nil, ""},
	} {
		req, err := http.NewRequest("POST", url+c.path, strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header = auth.Clone()
		for k, vs := range c.header {
			req.Header[k] = vs
		}
		resp, err := (&http.Client{Transport: &http.Transport{Proxy: nil}}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || f.count() != 1 {
			t.Errorf("the token in %s: %d, upstream saw %d requests; want 400 and none", name, resp.StatusCode, f.count()-1)
		}
	}
	if ev := f.events.String(); strings.Contains(ev, tok) || strings.Count(ev, `"code":"bad_request"`) != 6 {
		t.Errorf("events: want 6 bad_request and never the token")
	}
	req, _ := http.NewRequest("POST", url+"/x", strings.NewReader(`{"said":"`+tok+`"}`))
	req.Header = auth.Clone()
	resp, err := (&http.Client{Transport: &http.Transport{Proxy: nil}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || f.count() != 2 {
		t.Errorf("a body that quotes the token: %d, want 200 and the request sent", resp.StatusCode)
	}
}

// TestHeaderNamedAfterCredential: an answer's header named after the
// credential, in whatever case net/http gave the name, is left out; one
// that holds it has it redacted, and both count as redactions.
func TestHeaderNamedAfterCredential(t *testing.T) {
	f := newFixture(t, service("b", `auth = "bearer"`), func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Echo-"+strings.ToUpper(canary), "1")
		w.Header().Set("X-Key", canary)
		io.WriteString(w, "ok")
	}, "b")
	req, _ := http.NewRequest("GET", f.p.BaseURLs()["b"]+"/x", nil)
	req.Header.Set("Authorization", "Bearer "+f.p.Token())
	resp, err := (&http.Client{Transport: &http.Transport{Proxy: nil}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for k, vs := range resp.Header {
		if strings.Contains(strings.ToLower(k+strings.Join(vs, "")), canary) {
			t.Errorf("header %q holds the credential in some case", k)
		}
	}
	if resp.StatusCode != 200 || resp.Header.Get("X-Key") != "<redacted:t/cred>" {
		t.Errorf("%d, X-Key %q: want 200 and the value redacted", resp.StatusCode, resp.Header.Get("X-Key"))
	}
	f.p.Close() // once its requests have written their events
	if ev := f.events.String(); !strings.Contains(ev, `"redactions":2`) {
		t.Errorf("the event does not count 2 redactions")
	}
}

// TestEncodedAnswerInTwoHeaders: an answer whose Content-Encoding is
// identity in its first header and gzip in a second is not passed on
// either: a client would decode the credential out of it.
func TestEncodedAnswerInTwoHeaders(t *testing.T) {
	f := newFixture(t, service("b", `auth = "bearer"`), func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Encoding"] = []string{"identity", "gzip"}
		zw := gzip.NewWriter(w)
		io.WriteString(zw, "compressed "+canary)
		zw.Close()
	}, "b")
	status, body := get(t, f.p.BaseURLs()["b"]+"/x", http.Header{"Authorization": {"Bearer " + f.p.Token()}})
	if status != http.StatusBadGateway || !strings.Contains(body, `"code":"upstream_failed"`) {
		t.Errorf("an answer encoded in its second header: %d, %d bytes, want 502 upstream_failed and nothing of it", status, len(body))
	}
	if ev := f.events.String(); !strings.Contains(ev, `"cause":"read"`) {
		t.Errorf("its event is not upstream_failed, cause read")
	}
}

// TestClientThatStopsReading: a client that stops reading a long answer
// holds its slot for the service's timeout at most: with every slot held
// so, a request after them is still answered.
func TestClientThatStopsReading(t *testing.T) {
	started := make(chan struct{}, manifest.MaxUses)
	f := newFixture(t, service("b", "auth = \"bearer\"\ntimeout_ms = 3000\nmax_response_bytes = 8388608"),
		func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/long" {
				started <- struct{}{} // its slot is held
				w.Write(bytes.Repeat([]byte("z"), 8<<20))
			}
		}, "b")
	base, tok := f.p.BaseURLs()["b"], f.p.Token()
	host := strings.TrimPrefix(strings.TrimSuffix(base, "/b"), "http://")
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	for range manifest.MaxUses {
		c, err := d.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		fmt.Fprintf(c, "GET /b/long HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n", tok) // and never read
	}
	for range manifest.MaxUses {
		<-started
	}
	client := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 15 * time.Second}
	req, _ := http.NewRequest("GET", base+"/x", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("a request behind %d clients that stopped reading: %v", manifest.MaxUses, err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("a request behind clients that stopped reading: %d", resp.StatusCode)
	}
}
