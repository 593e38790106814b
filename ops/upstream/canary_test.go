package upstream

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// rawServer is a loopback TCP server that reads one request head per
// connection, records it, and answers it with answer (which may echo it,
// malformed), or holds the connection open until the test ends when
// answer is nil.
type rawServer struct {
	addr string
	mu   sync.Mutex
	seen []string
}

func newRawServer(t *testing.T, answer func(head string) string) *rawServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rs := &rawServer{addr: l.Addr().String()}
	release := make(chan struct{})
	var wg sync.WaitGroup
	t.Cleanup(func() { _ = l.Close(); close(release); wg.Wait() })
	wg.Go(func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer conn.Close()
				head := readHead(bufio.NewReader(conn))
				rs.mu.Lock()
				rs.seen = append(rs.seen, head)
				rs.mu.Unlock()
				if answer == nil {
					<-release
					return
				}
				_, _ = conn.Write([]byte(answer(head)))
			})
		}
	})
	return rs
}

// readHead reads a request's lines up to the blank one.
func readHead(r *bufio.Reader) string {
	var b strings.Builder
	for {
		line, err := r.ReadString('\n')
		b.WriteString(line)
		if err != nil || line == "\r\n" {
			return b.String()
		}
	}
}

func (rs *rawServer) heads() string {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return strings.Join(rs.seen, "")
}

// TestCanaryNeverInErrors: whichever way a call fails, its error holds
// neither the credential nor the caller's query, header values or body,
// even when the upstream echoes the request back in a malformed answer.
// The positive controls: the upstreams did receive the credential and the
// markers.
func TestCanaryNeverInErrors(t *testing.T) {
	const marker = "marker-q7d2" // the caller's own query, header and body
	echoStatus := newRawServer(t, func(head string) string {
		return "HTTP/1.1 " + strings.SplitN(head, "\r\n", 2)[0] + "\r\n\r\n"
	})
	echoHeader := newRawServer(t, func(head string) string {
		return "HTTP/1.1 200 OK\r\nbroken " + strings.ReplaceAll(head, "\r\n", " ") + "\r\n\r\n"
	})
	cutShort := newRawServer(t, func(head string) string {
		return "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + head
	})
	silent := newRawServer(t, nil)
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://elsewhere.test/echo?"+r.URL.RawQuery, http.StatusFound)
	})
	call := Call{Method: "POST", Path: "/echo", Query: url.Values{"m": {marker}},
		Header: http.Header{"X-Marker": {marker}}, Body: []byte(marker)}

	var errs []error
	for _, tc := range []struct {
		name, base, auth, follow string
		lookup                   resolver
		noCA                     bool
		want                     string
	}{
		{"status echo", "http://" + echoStatus.addr, "query", "", nil, false, CauseRead},
		{"header echo", "http://" + echoHeader.addr, "bearer", "", nil, false, CauseRead},
		{"cut short", "http://" + cutShort.addr, "header", "", nil, false, CauseRead},
		{"silent", "http://" + silent.addr, "query", "", nil, false, CauseTimeout},
		{"redirect", up.URL, "query", "same-origin", nil, false, CauseRedirect},
		{"tls", up.URL, "bearer", "", nil, true, CauseTLS},
		{"blocked", "https://evil.test", "bearer", "", mapResolver{"evil.test": {"169.254.169.254"}}, false, CauseBlocked},
		{"dns", "https://evil.test", "bearer", "", failingResolver(), false, CauseDNS},
		{"connect", "https://127.0.0.1:" + closedPort(t), "basic", "", nil, false, CauseConnect},
	} {
		cfg := up.cfg()
		cfg.BaseURL, cfg.Auth, cfg.FollowRedirects = tc.base, tc.auth, tc.follow
		cfg.Header, cfg.QueryParam, cfg.TimeoutMS = "X-Api-Key", "key", 300
		if tc.noCA {
			cfg.TLSCA = ""
		}
		cfg.AllowPrivate = tc.want != CauseBlocked
		s := newService(t, cfg)
		if tc.lookup != nil {
			s.lookup = tc.lookup
		}
		_, err := s.Do(context.Background(), call, cred())
		if causeOf(err) != tc.want {
			t.Errorf("%s: cause %q, want %q", tc.name, causeOf(err), tc.want)
		}
		errs = append(errs, err)
	}
	for i, err := range errs {
		if err == nil {
			continue
		}
		out := fmt.Sprintf("%v %+v %#v", err, err, err)
		if strings.Contains(out, canary[:12]) || strings.Contains(out, marker) {
			t.Errorf("error %d holds the credential or the caller's data", i)
		}
	}
	if !strings.Contains(echoStatus.heads(), "key="+canary) || !strings.Contains(echoHeader.heads(), "Bearer "+canary) ||
		!strings.Contains(cutShort.heads(), "X-Api-Key: "+canary) || !strings.Contains(echoStatus.heads(), marker) {
		t.Error("positive control: the upstreams did not receive the credential and the markers")
	}
}

// TestRefusalsHoldNoValues: a refusal names the header or parameter, not
// its value.
func TestRefusalsHoldNoValues(t *testing.T) {
	s := checkService(t, "query")
	for i, c := range []Call{
		{Method: "GET", Path: "/", Header: http.Header{"Authorization": {"Bearer " + canary}}},
		{Method: "GET", Path: "/", Header: http.Header{"X-A": {canary + "\r\n"}}},
		{Method: "GET", Path: "/", Query: url.Values{"api_key": {canary}}},
	} {
		_, err := s.Check(c)
		if kindOf(err) != BadRequest || strings.Contains(fmt.Sprintf("%v %#v", err, err), canary) {
			t.Errorf("call %d: kind %q, or the value is in the refusal", i, kindOf(err))
		}
	}
}
