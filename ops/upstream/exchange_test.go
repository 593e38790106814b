package upstream

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// TestAuthKinds: the credential arrives where each auth kind puts it, the
// caller's own query, headers and body arrive too, the path is sent under
// the base URL's path as the caller spelled it, upstream is asked for the
// identity encoding, and HTTP/2 is spoken.
func TestAuthKinds(t *testing.T) {
	up := newUpstream(t, nil)
	for _, tc := range []struct {
		auth string
		got  func(e echoed) string
		want string
	}{
		{"bearer", func(e echoed) string { return first(e.Header["Authorization"]) }, "Bearer " + canary},
		{"basic", func(e echoed) string { return first(e.Header["Authorization"]) },
			"Basic " + base64.StdEncoding.EncodeToString([]byte("ci-bot:"+canary))},
		{"header", func(e echoed) string { return first(e.Header["X-Api-Key"]) + first(e.Header["Authorization"]) }, canary},
		{"query", func(e echoed) string { return first(e.Query["api_key"]) + first(e.Header["Authorization"]) }, canary},
	} {
		cfg := up.cfg()
		cfg.BaseURL += "/base/"
		cfg.Auth, cfg.Header, cfg.QueryParam = tc.auth, "X-Api-Key", "api_key"
		s := newService(t, cfg)
		r, err := s.Do(context.Background(), Call{
			Method: "POST", Path: "/echo/a%20b", Query: url.Values{"q": {"1", "2"}},
			Header: http.Header{"X-Trace": {"t1"}, "Accept-Encoding": {"gzip"}}, Body: []byte("hello"),
		}, cred())
		if err != nil {
			t.Fatalf("%s: %s", tc.auth, masked(err))
		}
		e := decode(t, r)
		if got := tc.got(e); got != tc.want {
			t.Errorf("%s: credential arrived as %s", tc.auth, masked(got))
		}
		if r.Status != 200 || e.Method != "POST" || e.RawPath != "/base/echo/a%20b" || e.Body != "hello" ||
			strings.Join(e.Query["q"], ",") != "1,2" || first(e.Header["X-Trace"]) != "t1" ||
			strings.Join(e.Header["Accept-Encoding"], ",") != "identity" || e.Proto != "HTTP/2.0" {
			t.Errorf("%s: upstream saw %s", tc.auth, masked(e))
		}
		if r.BytesIn != 5 || r.BytesOut != int64(len(r.Body)) || r.Truncated {
			t.Errorf("%s: bytes in %d, out %d of %d, truncated %v", tc.auth, r.BytesIn, r.BytesOut, len(r.Body), r.Truncated)
		}
	}
}

// TestRefusedNeverLeaves: a call Check refuses sends nothing at all.
func TestRefusedNeverLeaves(t *testing.T) {
	up := newUpstream(t, nil)
	s := newService(t, up.cfg())
	for _, c := range []Call{
		{Method: "GET", Path: "/echo", Header: http.Header{"Authorization": {"Bearer mine"}}},
		{Method: "GET", Path: "/echo", Header: http.Header{"Host": {"evil.example"}}},
		{Method: "GET", Path: "/echo", Header: http.Header{"Cookie": {"a=b"}}},
		{Method: "GET", Path: "/echo/../admin"},
		{Method: "DELETE", Path: "/echo"},
	} {
		if _, err := s.Do(context.Background(), c, cred()); kindOf(err) == "" || kindOf(err) == "other" {
			t.Errorf("%s %s %v: %v; want a refusal", c.Method, c.Path, c.Header, err)
		}
	}
	if seen := up.requests(); len(seen) != 0 {
		t.Errorf("upstream saw %d requests: %s", len(seen), masked(seen))
	}
}

// TestResponseHeaders: the headers that carry credentials or belong to
// the connection, and the service's auth header, are not handed back.
func TestResponseHeaders(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		for _, k := range []string{"Set-Cookie", "Set-Cookie2", "Authorization", "Www-Authenticate",
			"Proxy-Authenticate", "Proxy-Other", "X-Api-Key", "X-Hop", "Keep-Alive", "X-Kept"} {
			h.Set(k, "v")
		}
		h.Set("Connection", "X-Hop")
		w.WriteHeader(http.StatusTeapot)
	})
	cfg := up.cfg()
	cfg.Auth, cfg.Header = "header", "X-Api-Key"
	s := newService(t, cfg)
	s.tls.NextProtos = []string{"http/1.1"} // Connection is HTTP/1's
	r, err := s.Do(context.Background(), Call{Method: "GET", Path: "/echo"}, cred())
	if err != nil {
		t.Fatal(masked(err))
	}
	if r.Status != http.StatusTeapot || r.Header.Get("X-Kept") != "v" {
		t.Errorf("status %d, headers %v", r.Status, r.Header)
	}
	for k := range r.Header {
		switch k {
		case "X-Kept", "Content-Length", "Date":
		default:
			t.Errorf("header %s handed back", k)
		}
	}
}

// TestSizeCap: a body past the cap is cut at it exactly, with or without
// a Content-Length, and is Truncated; a body of the cap exactly is whole.
func TestSizeCap(t *testing.T) {
	const capBytes = 1 << 20
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		n := map[string]int{"/echo/big": 3 << 20, "/echo/exact": capBytes}[r.URL.Path]
		if r.URL.Query().Get("chunked") == "" {
			w.Header().Set("Content-Length", strconv.Itoa(n))
		}
		chunk := []byte(strings.Repeat("x", 64<<10))
		for n > 0 {
			k := min(n, len(chunk))
			if _, err := w.Write(chunk[:k]); err != nil {
				return
			}
			n -= k
		}
	})
	s := newService(t, up.cfg())
	for _, tc := range []struct {
		path, chunked string
		truncated     bool
	}{{"/echo/big", "", true}, {"/echo/big", "1", true}, {"/echo/exact", "", false}, {"/echo/exact", "1", false}} {
		r, err := s.Do(context.Background(), Call{Method: "GET", Path: tc.path, Query: url.Values{"chunked": {tc.chunked}}}, cred())
		if err != nil {
			t.Fatalf("%s chunked %q: %v", tc.path, tc.chunked, masked(err))
		}
		if len(r.Body) != capBytes || r.BytesOut != capBytes || r.Truncated != tc.truncated {
			t.Errorf("%s chunked %q: %d bytes (out %d), truncated %v", tc.path, tc.chunked, len(r.Body), r.BytesOut, r.Truncated)
		}
	}
}

// TestBodyOneBuffer: a body whose length the upstream gave is read into
// one buffer of that length and a byte, never grown to twice its size.
func TestBodyOneBuffer(t *testing.T) {
	const n = 100_000
	up := newUpstream(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(n))
		_, _ = io.WriteString(w, strings.Repeat("b", n))
	})
	s := newService(t, up.cfg())
	r, err := s.Do(context.Background(), Call{Method: "GET", Path: "/echo"}, cred())
	if err != nil {
		t.Fatal(masked(err))
	}
	if len(r.Body) != n || cap(r.Body) > n+1 {
		t.Errorf("%d bytes in a buffer of %d", len(r.Body), cap(r.Body))
	}
}

// TestOpen: Open hands back the body unread, capped, with the safe
// headers only and no request (which holds the credential).
func TestOpen(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Set-Cookie", "s=1")
		_, _ = io.WriteString(w, strings.Repeat("y", 100))
	})
	cfg := up.cfg()
	cfg.MaxResponseBytes = 10
	s := newService(t, cfg)
	resp, err := s.Open(context.Background(), Call{Method: "GET", Path: "/echo"}, cred())
	if err != nil {
		t.Fatal(masked(err))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	body, ok := resp.Body.(*Body)
	if err != nil || string(b) != strings.Repeat("y", 10) || !ok || !body.Truncated() {
		t.Errorf("body %q, %v; a *Body %v, truncated", b, err, ok)
	}
	if resp.Request != nil || resp.Header.Get("Set-Cookie") != "" || resp.StatusCode != 200 {
		t.Errorf("request %v, headers %v, status %d", resp.Request, resp.Header, resp.StatusCode)
	}
}

// TestTimeout: an upstream that does not answer, or stops in the middle
// of its body, is a timeout at timeout_ms. The handlers block until the
// test ends.
func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/echo/mid" {
			w.Header().Set("Content-Length", "100")
			_, _ = io.WriteString(w, "partial")
			w.(http.Flusher).Flush()
		}
		<-release
	})
	t.Cleanup(func() { close(release) }) // before up.Close, which waits for the handlers
	cfg := up.cfg()
	cfg.TimeoutMS = 200
	s := newService(t, cfg)
	for _, p := range []string{"/echo/head", "/echo/mid"} {
		_, err := s.Do(context.Background(), Call{Method: "GET", Path: p}, cred())
		if causeOf(err) != CauseTimeout || !strings.Contains(err.Error(), s.addr) {
			t.Errorf("%s: %s; want a timeout naming %s", p, masked(err), s.addr)
		}
	}
}

// causeOf is the Cause of a Failure, "" for nil, "other" for anything else.
func causeOf(err error) string {
	var f *Failure
	switch {
	case err == nil:
		return ""
	case errors.As(err, &f):
		return f.Cause
	}
	return "other"
}

func first(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}

// TestConcurrentCalls: one Service serves calls in flight together, each
// with its own answer.
func TestConcurrentCalls(t *testing.T) {
	up := newUpstream(t, nil)
	s := newService(t, up.cfg())
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			r, err := s.Do(context.Background(), Call{Method: "GET", Path: "/echo/" + strconv.Itoa(i)}, cred())
			var e echoed
			if err == nil {
				err = json.Unmarshal(r.Body, &e)
			}
			if err == nil && e.Path != "/echo/"+strconv.Itoa(i) {
				err = errors.New("another call's answer")
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// masked prints v, %+v, with the canary masked: a failing test prints
// no credential either.
func masked(v any) string {
	if r, ok := v.(*Response); ok && r != nil {
		v = fmt.Sprintf("status %d, headers %v, body %q", r.Status, r.Header, r.Body)
	}
	return strings.ReplaceAll(fmt.Sprintf("%+v", v), canary, "<canary>")
}

// TestEncoded: a response in any content encoding but identity is one
// scrub cannot see into.
func TestEncoded(t *testing.T) {
	for _, c := range []struct {
		vals []string
		want bool
	}{
		{nil, false}, {[]string{"identity"}, false}, {[]string{"Identity"}, false}, {[]string{""}, false},
		{[]string{"gzip"}, true}, {[]string{"br"}, true}, {[]string{"identity, gzip"}, true},
		{[]string{"identity", "deflate"}, true}, {[]string{" x-anything "}, true},
	} {
		h := http.Header{"Content-Encoding": c.vals}
		if got := Encoded(h); got != c.want {
			t.Errorf("Encoded(%q) = %v, want %v", c.vals, got, c.want)
		}
	}
}
