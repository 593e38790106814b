package upstream

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"

	"github.com/arca-secrets/arca/ops/upstream/upstreamtest"

	"github.com/arca-secrets/arca/ops/config"
	"github.com/arca-secrets/arca/vault/secret"
)

// canary is the credential of every test: it must never appear in an
// error, and does appear where the service's auth kind puts it upstream.
const canary = "canary-3b9e71-credential"

// echoed is what the echo server received, as it answers it.
type echoed struct {
	Method  string              `json:"method"`
	Path    string              `json:"path"`     // decoded
	RawPath string              `json:"raw_path"` // as sent
	Query   map[string][]string `json:"query"`
	Header  map[string][]string `json:"header"`
	Host    string              `json:"host"`
	Proto   string              `json:"proto"`
	Body    string              `json:"body"`
}

// upstreamServer is a TLS server of its own CA that records every request
// it receives and answers through handle, or echoes it as JSON.
type upstreamServer struct {
	*httptest.Server
	caFile string
	mu     sync.Mutex
	seen   []echoed
}

// newUpstream starts an HTTPS server (HTTP/2 on) whose certificate is
// written, PEM, to a file for tls_ca. handle may be nil: the request is
// echoed as JSON.
func newUpstream(t testing.TB, handle http.HandlerFunc) *upstreamServer {
	t.Helper()
	u := &upstreamServer{}
	u.Server, u.caFile = upstreamtest.StartTLS(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e := echoOf(r)
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

func echoOf(r *http.Request) echoed {
	var body [4096]byte
	n, _ := r.Body.Read(body[:])
	return echoed{
		Method: r.Method, Path: r.URL.Path, RawPath: r.URL.EscapedPath(), Query: r.URL.Query(),
		Header: r.Header, Host: r.Host, Proto: r.Proto, Body: string(body[:n]),
	}
}

// requests returns what the server has received so far.
func (u *upstreamServer) requests() []echoed {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]echoed(nil), u.seen...)
}

// cfg is a service config for u: bearer auth, GET and POST on /echo and
// beneath, its CA given, private addresses allowed (u is on loopback).
func (u *upstreamServer) cfg() config.Service {
	return config.Service{
		BaseURL: u.URL, Credential: "arca://t/cred", Auth: "bearer",
		Methods: []string{"GET", "POST"}, Paths: []string{"/echo", "/echo/*"},
		TimeoutMS: 5000, MaxResponseBytes: 1 << 20, TLSCA: u.caFile, AllowPrivate: true,
	}
}

// newService builds the service of cfg, closed at the end of the test.
func newService(t testing.TB, cfg config.Service) *Service {
	t.Helper()
	s, err := New("svc", cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// cred is the canary credential, with a user for auth basic.
func cred() Credential {
	return Credential{User: secret.New([]byte("ci-bot")), Secret: secret.New([]byte(canary))}
}

// decode reads the echo of a response.
func decode(t *testing.T, r *Response) echoed {
	t.Helper()
	var e echoed
	if err := json.Unmarshal(r.Body, &e); err != nil {
		t.Fatalf("status %d, body not an echo: %v", r.Status, err)
	}
	return e
}

// mapResolver resolves the names it maps, and no other (not found).
type mapResolver map[string][]string

func (m mapResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	ss, ok := m[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out, nil
}
