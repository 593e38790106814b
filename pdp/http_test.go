package pdp

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestEndpointRules(t *testing.T) {
	for _, c := range []struct {
		url, path, api string
		why            string // "": accepted
		want           endpoint
	}{
		{url: "http://127.0.0.1:8181/v1/data/arca/allow", api: "opa",
			want: endpoint{"tcp", "127.0.0.1:8181", "http://127.0.0.1:8181/v1/data/arca/allow"}},
		{url: "http://127.9.8.7/v1/data/x", api: "opa", want: endpoint{"tcp", "127.9.8.7:80", "http://127.9.8.7/v1/data/x"}},
		{url: "http://[::1]:9/v1/data/x?metrics", api: "opa", want: endpoint{"tcp", "[::1]:9", "http://[::1]:9/v1/data/x?metrics"}},
		{url: "http://localhost:8080", api: "authzen",
			want: endpoint{"tcp", "localhost:8080", "http://localhost:8080/access/v1/evaluation"}},
		{url: "http://localhost:8080/", api: "authzen",
			want: endpoint{"tcp", "localhost:8080", "http://localhost:8080/access/v1/evaluation"}},
		{url: "http://localhost:8080/pdp/eval", api: "authzen", want: endpoint{"tcp", "localhost:8080", "http://localhost:8080/pdp/eval"}},
		{url: "unix:/run/opa.sock", path: "/v1/data/arca/decision", api: "opa",
			want: endpoint{"unix", "/run/opa.sock", "http://localhost/v1/data/arca/decision"}},
		{url: "unix:/run/az.sock", api: "authzen", want: endpoint{"unix", "/run/az.sock", "http://localhost/access/v1/evaluation"}},

		{url: "http://127.0.0.1:8181/v1/data/x", why: "api is required with url"},
		{url: "http://127.0.0.1:8181/v1/data/x", api: "xacml", why: `api "xacml" is not opa or authzen`},
		{url: "http://10.0.0.1:8181/v1/data/x", api: "opa", why: "url host must be a loopback address"},
		{url: "http://192.168.1.2/v1/data/x", api: "opa", why: "url host must be a loopback address"},
		{url: "http://opa.internal/v1/data/x", api: "opa", why: "url host must be a loopback address"},
		{url: "http://0.0.0.0:8181/v1/data/x", api: "opa", why: "url host must be a loopback address"},
		{url: "https://127.0.0.1:8181/v1/data/x", api: "opa", why: "url must be http://"},
		{url: "ftp://127.0.0.1/x", api: "opa", why: "url must be http://"},
		{url: "127.0.0.1:8181/v1/data/x", api: "opa", why: "url must be http://"},
		{url: "http:///v1/data/x", api: "opa", why: "url must be http://"},
		{url: "http://u:p@127.0.0.1/v1/data/x", api: "opa", why: "url may not hold a user"},
		{url: "http://127.0.0.1/v1/data/x#frag", api: "opa", why: "url may not hold a #fragment"},
		{url: "http://127.0.0.1:8181", api: "opa", why: "url needs the policy's path for api opa"},
		{url: "http://127.0.0.1:8181/", api: "opa", why: "url needs the policy's path for api opa"},
		{url: "http://127.0.0.1/v1/data/x y", api: "opa", why: "no space or control character"},
		{url: "http://127.0.0.1/" + strings.Repeat("a", 3000), api: "opa", why: "at most 2048 bytes"},
		{url: "http://127.0.0.1/v1/data/x", path: "/v1/data/y", api: "opa", why: "http_path is only for a unix: url"},
		{url: "unix:run/opa.sock", path: "/v1/data/x", api: "opa", why: "needs an absolute socket path"},
		{url: "unix:/run/opa.sock", api: "opa", why: "http_path needs the policy's path for api opa"},
		{url: "unix:/run/opa.sock", path: "v1/data/x", api: "opa", why: "http_path path must start with /"},
	} {
		ep, why := parseEndpoint(c.url, c.path, c.api)
		if c.why == "" {
			if why != "" || ep != c.want {
				t.Errorf("%s %s %s: %+v %q, want %+v", c.url, c.path, c.api, ep, why, c.want)
			}
			continue
		}
		if !strings.Contains(why, c.why) {
			t.Errorf("%s %s %s: why %q, want it to contain %q", c.url, c.path, c.api, why, c.why)
		}
		d := New(Config{URL: c.url, HTTPPath: c.path, API: c.api, Timeout: quick})
		if _, err := d.Decide(context.Background(), getReq); err == nil || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%s: a refused url decided: %v", c.url, err)
		}
	}
}

// TestDialRefusesNonLoopback: the dialer checks the address it connects
// to, whatever the URL said.
func TestDialRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"10.0.0.1:80", "192.0.2.1:8181", "[2001:db8::1]:80", "0.0.0.0:80"} {
		if err := dialLoopback("tcp", addr, nil); err == nil {
			t.Errorf("%s: dial allowed", addr)
		}
	}
	for _, addr := range []string{"127.0.0.1:80", "127.1.2.3:1", "[::1]:8181"} {
		if err := dialLoopback("tcp", addr, nil); err != nil {
			t.Errorf("%s: %v", addr, err)
		}
	}
}

// hrow is one way an HTTP PDP can answer, fail or lie.
type hrow struct {
	name    string
	api     string // zero: opa
	handler http.HandlerFunc
	timeout time.Duration // zero: quick
	want    *Verdict      // nil: unreachable
	why     string
}

func reply(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

func hrows() []hrow {
	padTo := func(n int) string {
		return `{"result":true}` + strings.Repeat(" ", n-len(`{"result":true}`))
	}
	return []hrow{
		// OPA: honest answers.
		{name: "opa verdict object", handler: reply(200, `{"result":{"allow":true,"reason":"ok","obligations":["log"]},"decision_id":"x"}`),
			want: allow("ok", "log")},
		{name: "opa deny object", handler: reply(200, `{"result":{"allow":false,"reason":"no"}}`), want: deny("no")},
		{name: "opa bare true", handler: reply(200, `{"result":true}`), want: allow("")},
		{name: "opa bare false", handler: reply(200, `{"result":false}`), want: deny("")},
		{name: "opa with a warning and metrics", handler: reply(200, `{"warning":{"code":"api_usage_warning"},"metrics":{"n":1},"result":true}`),
			want: allow("")},
		{name: "opa response exactly at the cap", handler: reply(200, padTo(MaxVerdict)), want: allow("")},

		// OPA: undefined and lies.
		{name: "opa undefined result", handler: reply(200, `{}`), why: "opa result is undefined"},
		{name: "opa undefined with a warning", handler: reply(200, `{"warning":{"code":"api_usage_warning","message":"x"}}`),
			why: "opa result is undefined"},
		{name: "opa result null", handler: reply(200, `{"result":null}`), why: "neither a verdict object nor a boolean"},
		{name: "opa result a string", handler: reply(200, `{"result":"true"}`), why: "neither a verdict object nor a boolean"},
		{name: "opa result an array", handler: reply(200, `{"result":[true]}`), why: "neither a verdict object nor a boolean"},
		{name: "opa result twice", handler: reply(200, `{"result":false,"result":true}`), why: "opa response repeats key result"},
		{name: "opa Result is not result", handler: reply(200, `{"Result":true}`), why: "opa result is undefined"},
		{name: "opa verdict without allow", handler: reply(200, `{"result":{"reason":"trust me"}}`), why: "verdict has no boolean allow"},
		{name: "opa verdict allow a string", handler: reply(200, `{"result":{"allow":"true"}}`), why: "verdict has no boolean allow"},
		{name: "opa garbage", handler: reply(200, `allow: yes`), why: "opa response is not JSON"},
		{name: "opa empty body", handler: reply(200, ``), why: "opa response is empty"},
		{name: "opa two objects", handler: reply(200, `{"result":false}{"result":true}`), why: "has data after the JSON object"},
		{name: "opa array", handler: reply(200, `[{"result":true}]`), why: "opa response is not a JSON object"},
		{name: "opa one byte over the cap", handler: reply(200, padTo(MaxVerdict+1)), why: "response larger than 65536 bytes"},
		{name: "a flood", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"result":true,"x":"`))
			for range 64 {
				w.Write(make([]byte, 32<<10))
			}
		}, why: "response larger than 65536 bytes"},

		// Transport.
		{name: "server error", handler: reply(500, `{"code":"internal_error"}`), why: "answered HTTP 500"},
		{name: "bad request", handler: reply(400, `{"result":true}`), why: "answered HTTP 400"},
		{name: "a 204", handler: reply(204, ``), why: "answered HTTP 204"},
		{name: "redirect is not followed", handler: func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/allow-everything", http.StatusTemporaryRedirect)
		}, why: "answered HTTP 307"},
		{name: "hangs before headers", timeout: short, handler: func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body) // then the server notices the client leave
			<-r.Context().Done()
		}, why: "timed out after 300ms"},
		{name: "hangs in the body", timeout: short, handler: func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.WriteHeader(200)
			w.Write([]byte(`{"result":`))
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}, why: "timed out after 300ms"},
		{name: "huge headers", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Pad", strings.Repeat("a", 128<<10))
			reply(200, `{"result":true}`)(w, r)
		}, why: "cannot reach the opa server"},

		// AuthZEN.
		{name: "authzen decision true", api: "authzen", handler: reply(200, `{"decision":true}`), want: allow("")},
		{name: "authzen decision false with a reason", api: "authzen",
			handler: reply(200, `{"decision":false,"context":{"reason":"resource not found"}}`), want: deny("resource not found")},
		{name: "authzen reason_user, en", api: "authzen",
			handler: reply(200, `{"decision":false,"context":{"id":"0","reason_admin":{"en":"policy C076E82F"},"reason_user":{"fr":"non","en":"no"}}}`),
			want:    deny("no")},
		{name: "authzen obligations", api: "authzen",
			handler: reply(200, `{"decision":true,"context":{"reason":"ok","obligations":["log","mfa"]}}`), want: allow("ok", "log", "mfa")},
		{name: "authzen empty context", api: "authzen", handler: reply(200, `{"decision":true,"context":{}}`), want: allow("")},
		{name: "authzen decision missing", api: "authzen", handler: reply(200, `{"context":{"reason":"ok"}}`),
			why: "authzen response has no boolean decision"},
		{name: "authzen decision a string", api: "authzen", handler: reply(200, `{"decision":"true"}`),
			why: "authzen response has no boolean decision"},
		{name: "authzen decision null", api: "authzen", handler: reply(200, `{"decision":null}`),
			why: "authzen response has no boolean decision"},
		{name: "authzen decision twice", api: "authzen", handler: reply(200, `{"decision":false,"decision":true}`),
			why: "authzen response repeats key decision"},
		{name: "authzen context an array", api: "authzen", handler: reply(200, `{"decision":true,"context":[]}`),
			why: "authzen context is not a JSON object"},
		{name: "authzen reason a number", api: "authzen", handler: reply(200, `{"decision":true,"context":{"reason":1}}`),
			why: "authzen context reason is not a string"},
		{name: "authzen reason_user a string", api: "authzen", handler: reply(200, `{"decision":true,"context":{"reason_user":"x"}}`),
			why: "reason_user is not an object of strings"},
		{name: "authzen obligations a string", api: "authzen",
			handler: reply(200, `{"decision":true,"context":{"obligations":"log"}}`), why: "obligations is not an array of strings"},
		{name: "authzen garbage", api: "authzen", handler: reply(200, `<html>`), why: "authzen response is not JSON"},
		{name: "authzen 403", api: "authzen", handler: reply(403, `{"decision":true}`), why: "answered HTTP 403"},
	}
}

func TestHTTPRows(t *testing.T) {
	for _, r := range hrows() {
		t.Run(r.name, func(t *testing.T) {
			var redirected atomic.Bool
			mux := http.NewServeMux()
			mux.HandleFunc("/allow-everything", func(w http.ResponseWriter, r *http.Request) {
				redirected.Store(true)
				reply(200, `{"result":true,"decision":true}`)(w, r)
			})
			mux.HandleFunc("/", r.handler)
			srv := httptest.NewServer(mux)
			defer srv.Close()
			if r.api == "" {
				r.api = APIOPA
			}
			if r.timeout == 0 {
				r.timeout = quick
			}
			d := New(Config{URL: srv.URL + "/v1/data/arca/decision", API: r.api, Timeout: r.timeout})
			defer d.Close()
			t0 := time.Now()
			v, err := d.Decide(context.Background(), getReq)
			if el := time.Since(t0); el >= r.timeout+margin {
				t.Errorf("took %v with a %v timeout", el, r.timeout)
			}
			if r.want != nil {
				if err != nil {
					t.Fatalf("err = %v, want %+v", err, *r.want)
				}
				if !reflect.DeepEqual(v, *r.want) {
					t.Fatalf("verdict = %+v, want %+v", v, *r.want)
				}
			} else {
				wantUnreachable(t, err, r.why)
				if !reflect.DeepEqual(v, Verdict{}) {
					t.Errorf("unreachable decision returned verdict %+v", v)
				}
			}
			if redirected.Load() {
				t.Error("the redirect was followed")
			}
		})
	}
}

// TestHTTPConnectionPerDecision: each decision has a connection of its
// own: no connection carries a second request.
func TestHTTPConnectionPerDecision(t *testing.T) {
	var mu sync.Mutex
	requests := map[net.Conn]int{}
	srv := httptest.NewUnstartedServer(reply(200, `{"result":true}`))
	srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateActive {
			mu.Lock()
			requests[c]++
			mu.Unlock()
		}
	}
	srv.Start()
	defer srv.Close()
	d := New(Config{URL: srv.URL + "/v1/data/arca/allow", API: APIOPA, Timeout: quick})
	defer d.Close()
	for i := range 50 {
		if v, err := d.Decide(context.Background(), getReq); err != nil || !v.Allow {
			t.Fatalf("decision %d: %+v %v", i, v, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(requests) != 50 {
		t.Errorf("50 decisions on %d connections, want 50", len(requests))
	}
}

// TestHTTPStaleResponseGoesNowhere: a policy server that writes its answer
// to one request twice, the copy late — on the same connection, once the
// next request is in, before the answer it meant for that one — never has
// the copy taken as the next decision's verdict, for either api: the next
// decision is on a connection of its own.
func TestHTTPStaleResponseGoesNowhere(t *testing.T) {
	for _, c := range []struct{ api, allow, deny string }{
		{APIOPA, `{"result":{"allow":true,"reason":"a may"}}`, `{"result":{"allow":false,"reason":"only a"}}`},
		{APIAuthZEN, `{"decision":true,"context":{"reason":"a may"}}`, `{"decision":false,"context":{"reason":"only a"}}`},
	} {
		t.Run(c.api, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			go func() {
				for {
					conn, err := ln.Accept()
					if err != nil {
						return
					}
					go answerTwice(conn, c.allow, c.deny)
				}
			}()
			d := New(Config{URL: "http://" + ln.Addr().String() + "/v1/data/arca/decision", API: c.api, Timeout: quick})
			defer d.Close()
			reqA, reqB := getReq, getReq
			reqA.Actor, reqB.Actor = "agent:a", "agent:b"
			if v, err := d.Decide(context.Background(), reqA); err != nil || !reflect.DeepEqual(v, *allow("a may")) {
				t.Fatalf("agent:a: %+v %v", v, err)
			}
			if v, err := d.Decide(context.Background(), reqB); err != nil || !reflect.DeepEqual(v, *deny("only a")) {
				t.Fatalf("agent:b, whom the server denies: %+v %v", v, err)
			}
		})
	}
}

// answerTwice serves HTTP/1.1 on conn, ignoring Connection: close: allow
// for a request from agent:a, deny otherwise, each response after the first
// preceded by a copy of the one before (the late copy).
func answerTwice(conn net.Conn, allow, deny string) {
	defer conn.Close()
	br := bufio.NewReader(conn)
	var last string
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		body, _ := io.ReadAll(req.Body)
		answer := deny
		if strings.Contains(string(body), `"agent:a"`) {
			answer = allow
		}
		resp := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(answer)) + "\r\n\r\n" + answer
		if _, err := io.WriteString(conn, last+resp); err != nil {
			return
		}
		last = resp
	}
}

// TestHTTPSendsTheRequest: OPA gets {"input": <the exec PDP's request>},
// posted as JSON to the url's path.
func TestHTTPSendsTheRequest(t *testing.T) {
	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- r.Method + " " + r.URL.Path + " " + r.Header.Get("Content-Type") + " " + string(b)
		reply(200, `{"result":true}`)(w, r)
	}))
	defer srv.Close()
	d := New(Config{URL: srv.URL + "/v1/data/arca/allow", API: APIOPA, Timeout: quick})
	defer d.Close()
	req := Request{Actor: "agent:<ci>&", Attestation: "tok", Op: "get", Env: "prod", Ref: "ns/name"}
	if _, err := d.Decide(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	want := `POST /v1/data/arca/allow application/json {"input":{"actor":"agent:<ci>&","attestation":"tok","op":"get","env":"prod","ref":"ns/name"}}`
	if g := <-got; g != want {
		t.Errorf("got  %s\nwant %s", g, want)
	}
}

// TestHTTPUnreachableServer: nothing listening is unreachable, named.
func TestHTTPUnreachableServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	d := New(Config{URL: "http://" + addr + "/v1/data/x", API: APIOPA, Timeout: quick})
	defer d.Close()
	_, err = d.Decide(context.Background(), getReq)
	wantUnreachable(t, err, "cannot reach the opa server")
	wantUnreachable(t, err, "connection refused")

	sock := New(Config{URL: "unix:" + filepath.Join(t.TempDir(), "none.sock"), API: APIAuthZEN, Timeout: quick})
	defer sock.Close()
	_, err = sock.Decide(context.Background(), getReq)
	wantUnreachable(t, err, "cannot reach the authzen server")
}

// TestHTTPIgnoresProxy: $HTTP_PROXY never redirects a decision.
func TestHTTPIgnoresProxy(t *testing.T) {
	var proxied atomic.Bool
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxied.Store(true)
		reply(200, `{"result":true}`)(w, r)
	}))
	defer proxy.Close()
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("http_proxy", proxy.URL)
	srv := httptest.NewServer(reply(200, `{"result":false}`))
	defer srv.Close()
	d := New(Config{URL: srv.URL + "/v1/data/x", API: APIOPA, Timeout: quick})
	defer d.Close()
	v, err := d.Decide(context.Background(), getReq)
	if err != nil || v.Allow || proxied.Load() {
		t.Errorf("verdict %+v, err %v, proxied %v", v, err, proxied.Load())
	}
}

// hangingServer reads each request and never answers it; arrived gets a
// send as each request has been read (while it has room).
func hangingServer(t *testing.T) (srv *httptest.Server, arrived <-chan struct{}) {
	ch := make(chan struct{}, 8)
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		select {
		case ch <- struct{}{}:
		default:
		}
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	return srv, ch
}

// TestHTTPCancel: a cancelled ctx ends the decision at once: cancelled once
// the request is at the server.
func TestHTTPCancel(t *testing.T) {
	srv, arrived := hangingServer(t)
	d := New(Config{URL: srv.URL + "/v1/data/x", API: APIOPA, Timeout: quick})
	defer d.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-arrived:
			cancel()
		case <-ctx.Done():
		}
	}()
	_, err := d.Decide(ctx, getReq)
	wantUnreachable(t, err, "cancelled: context canceled")
}

// TestHTTPClose: Close fails the decision in flight (at the server) at
// once, well before its deadline, and every later one.
func TestHTTPClose(t *testing.T) {
	srv, arrived := hangingServer(t)
	d := New(Config{URL: srv.URL + "/v1/data/x", API: APIOPA, Timeout: quick})
	done := make(chan struct{})
	defer close(done)
	var closed atomic.Int64 // when Close was called, in ns after t0
	t0 := time.Now()
	go func() {
		select {
		case <-arrived:
			closed.Store(int64(time.Since(t0)))
			d.Close()
		case <-done:
		}
	}()
	_, err := d.Decide(context.Background(), getReq)
	wantUnreachable(t, err, "pdp is closed")
	if el := time.Since(t0); el-time.Duration(closed.Load()) >= quick/2 {
		t.Errorf("the decision in flight ended %v after it began, with Close at %v", el, time.Duration(closed.Load()))
	}
	_, err = d.Decide(context.Background(), getReq)
	wantUnreachable(t, err, "pdp is closed")
}
