package upstream

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/arca-secrets/arca/ops/config"
)

// TestBlockedAddress: a name that resolves to a guarded address is
// refused before any connection, unless allow_private; so is a base URL
// on a loopback address itself.
func TestBlockedAddress(t *testing.T) {
	up := newUpstream(t, nil)
	_, port, _ := net.SplitHostPort(up.Listener.Addr().String())
	for _, addr := range []string{"127.0.0.1", "169.254.169.254", "::1", "10.1.2.3", "::ffff:127.0.0.1", "fd00:ec2::254", "100.100.100.200"} {
		cfg := up.cfg()
		cfg.BaseURL, cfg.AllowPrivate = "https://evil.test:"+port, false
		s := newService(t, cfg)
		s.lookup = mapResolver{"evil.test": {addr}}
		_, err := s.Do(context.Background(), Call{Method: "GET", Path: "/echo"}, cred())
		if causeOf(err) != CauseBlocked || !strings.Contains(err.Error(), "evil.test:"+port) {
			t.Errorf("evil.test → %s: %s; want blocked_address naming the host and port", addr, masked(err))
		}
	}
	cfg := up.cfg()
	cfg.AllowPrivate = false
	s := newService(t, cfg)
	if _, err := s.Do(context.Background(), Call{Method: "GET", Path: "/echo"}, cred()); causeOf(err) != CauseBlocked {
		t.Errorf("base URL %s without allow_private: %s; want blocked_address", cfg.BaseURL, masked(err))
	}
	if seen := up.requests(); len(seen) != 0 {
		t.Errorf("upstream saw %d requests", len(seen))
	}
	// A name with guarded and public addresses: only the public ones are
	// dialled (resolve alone, so that no public address is dialled here).
	cfg.BaseURL = "https://mixed.test"
	s = newService(t, cfg)
	s.lookup = mapResolver{"mixed.test": {"127.0.0.1", "::ffff:169.254.169.254", "93.184.216.34", "2606:2800::1"}}
	ips, err := s.resolve(context.Background())
	if fmt.Sprint(ips) != "[93.184.216.34 2606:2800::1]" || err != nil {
		t.Errorf("mixed.test: dials %v, %v", ips, err)
	}
}

// TestPlainHTTPStaysOnLoopback: an http base URL's host (localhost) that
// resolves to anything but a loopback address is blocked_address, even
// with allow_private: the credential would cross a network in the clear.
// Its loopback addresses are dialled.
func TestPlainHTTPStaysOnLoopback(t *testing.T) {
	for _, addrs := range [][]string{{"93.184.216.34"}, {"10.0.0.7"}, {"169.254.169.254", "2606:2800::1"}} {
		s := newService(t, config.Service{BaseURL: "http://localhost:8080", Auth: "bearer", Paths: []string{"/*"}, AllowPrivate: true})
		s.lookup = mapResolver{"localhost": addrs}
		if ips, err := s.resolve(context.Background()); causeOf(err) != CauseBlocked {
			t.Errorf("localhost → %v: dials %v, %v; want blocked_address", addrs, ips, err)
		}
	}
	s := newService(t, config.Service{BaseURL: "http://localhost:8080", Auth: "bearer", Paths: []string{"/*"}, AllowPrivate: true})
	s.lookup = mapResolver{"localhost": {"93.184.216.34", "127.0.0.1", "::1"}}
	if ips, err := s.resolve(context.Background()); fmt.Sprint(ips) != "[127.0.0.1 ::1]" || err != nil {
		t.Errorf("localhost → public and loopback: dials %v, %v; want the loopback ones", ips, err)
	}
}

// TestDialsTheAddressChecked: a name is resolved by the service's
// resolver alone, once a connection, and the address it gave is dialled,
// with the configured host as the TLS server name (the test certificate's
// example.com); the connection is kept alive for the calls after.
func TestDialsTheAddressChecked(t *testing.T) {
	up := newUpstream(t, nil)
	_, port, _ := net.SplitHostPort(up.Listener.Addr().String())
	cfg := up.cfg()
	cfg.BaseURL = "https://EXAMPLE.com:" + port
	s := newService(t, cfg)
	lookups := &countingResolver{r: mapResolver{"EXAMPLE.com": {"127.0.0.1"}}}
	s.lookup = lookups
	for range 3 {
		r, err := s.Do(context.Background(), Call{Method: "GET", Path: "/echo"}, cred())
		if err != nil {
			t.Fatal(masked(err))
		}
		if e := decode(t, r); !strings.EqualFold(e.Host, "example.com:"+port) {
			t.Errorf("upstream saw host %q", e.Host)
		}
	}
	if lookups.n.Load() != 1 {
		t.Errorf("%d lookups for 3 calls, want 1: the connection is not kept alive", lookups.n.Load())
	}
}

// countingResolver counts the lookups it passes on to r.
type countingResolver struct {
	r resolver
	n atomic.Int32
}

func (c *countingResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	c.n.Add(1)
	return c.r.LookupNetIP(ctx, network, host)
}

// TestNew: a base URL, an auth kind or a tls_ca that cannot be used is an
// error of New, naming the service.
func TestNew(t *testing.T) {
	notPEM := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, cfg := range map[string]config.Service{
		"http to a public host": {BaseURL: "http://api.example.com", Auth: "bearer"},
		"ftp":                   {BaseURL: "ftp://api.example.com", Auth: "bearer"},
		"no host":               {BaseURL: "https:///x", Auth: "bearer"},
		"user in the URL":       {BaseURL: "https://u:p@api.example.com", Auth: "bearer"},
		"query in the URL":      {BaseURL: "https://api.example.com/?a=1", Auth: "bearer"},
		"non-ASCII host":        {BaseURL: "https://bücher.example", Auth: "bearer"},
		"unknown auth":          {BaseURL: "https://api.example.com", Auth: "digest"},
		"header without name":   {BaseURL: "https://api.example.com", Auth: "header"},
		"query without param":   {BaseURL: "https://api.example.com", Auth: "query"},
		"missing tls_ca":        {BaseURL: "https://api.example.com", Auth: "bearer", TLSCA: notPEM + ".none"},
		"tls_ca not PEM":        {BaseURL: "https://api.example.com", Auth: "bearer", TLSCA: notPEM},
	} {
		if s, err := New("gh", cfg); err == nil || !strings.HasPrefix(err.Error(), "service gh: ") {
			t.Errorf("%s: %v, %v; want an error naming the service", name, s, err)
		}
	}
	for _, base := range []string{"http://127.0.0.1:8080", "http://localhost", "http://[::1]:9", "https://api.example.com/v3"} {
		if _, err := New("gh", config.Service{BaseURL: base, Auth: "bearer"}); err != nil {
			t.Errorf("%s: %v", base, err)
		}
	}
}

// TestBlockedKind: the guarded ranges, in their plain, IPv4-mapped and
// IPv4-embedding forms, and public addresses that pass.
func TestBlockedKind(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1": "loopback", "127.9.9.9": "loopback", "::1": "loopback", "::ffff:127.0.0.1": "loopback",
		"10.1.2.3": "private", "172.16.0.1": "private", "192.168.1.1": "private", "fc00::1": "private",
		"fd00:ec2::254": "private", "169.254.169.254": "link-local", "::ffff:169.254.169.254": "link-local",
		"fe80::1": "link-local", "0.0.0.0": "unspecified", "::": "unspecified", "224.0.0.1": "multicast",
		"ff02::1": "multicast", "100.64.0.1": "CGNAT", "100.100.100.200": "CGNAT", "0.1.2.3": "this-network",
		"255.255.255.255": "reserved", "::127.0.0.1": "IPv4-compatible", "64:ff9b::a9fe:a9fe": "link-local",
		"64:ff9b::7f00:1": "loopback", "2002:a00:1::": "private", "fec0::1": "site-local",
		"8.8.8.8": "", "100.128.0.1": "", "64:ff9b::808:808": "", "2606:4700::1111": "", "::ffff:1.1.1.1": "",
	} {
		if got := blockedKind(netip.MustParseAddr(addr).Unmap()); got != want {
			t.Errorf("%s: %q, want %q", addr, got, want)
		}
	}
}

// TestNetworkFailures: each way a connection fails has its cause.
func TestNetworkFailures(t *testing.T) {
	up := newUpstream(t, nil)
	_, port, _ := net.SplitHostPort(up.Listener.Addr().String())
	closed := closedPort(t)
	for _, tc := range []struct {
		name, base string
		lookup     resolver
		noCA       bool
		want       string
	}{
		{"unknown authority", up.URL, nil, true, CauseTLS},
		{"wrong name", "https://wrong.test:" + port, mapResolver{"wrong.test": {"127.0.0.1"}}, false, CauseTLS},
		{"not found", "https://missing.test", mapResolver{}, false, CauseDNS},
		{"resolver fails", "https://any.test", failingResolver(), false, CauseDNS},
		{"no address", "https://empty.test", mapResolver{"empty.test": nil}, false, CauseDNS},
		{"refused", "https://127.0.0.1:" + closed, nil, false, CauseConnect},
	} {
		cfg := up.cfg()
		cfg.BaseURL = tc.base
		if tc.noCA {
			cfg.TLSCA = ""
		}
		s := newService(t, cfg)
		if tc.lookup != nil {
			s.lookup = tc.lookup
		}
		_, err := s.Do(context.Background(), Call{Method: "GET", Path: "/echo"}, cred())
		u, _ := url.Parse(tc.base)
		if causeOf(err) != tc.want || !strings.Contains(err.Error(), u.Hostname()) {
			t.Errorf("%s: %s; want %s naming %s", tc.name, masked(err), tc.want, u.Hostname())
		}
	}
}

// failingResolver is a real resolver whose DNS server cannot be reached.
func failingResolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("no DNS server here")
	}}
}

// closedPort is a loopback port nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	_ = l.Close()
	return port
}

// TestRedirects: "none" hands the redirect back; "same-origin" follows it
// on the origin and within the paths, with the credential, and refuses
// any other redirect without sending it anywhere.
func TestRedirects(t *testing.T) {
	other := newUpstream(t, nil)
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/echo/away":
			http.Redirect(w, r, other.URL+"/echo", http.StatusFound)
		case "/echo/here":
			http.Redirect(w, r, "/echo/there?x=1", http.StatusFound)
		case "/echo/admin":
			http.Redirect(w, r, "/admin", http.StatusFound)
		case "/echo/loop":
			http.Redirect(w, r, "/echo/loop", http.StatusFound)
		default:
			_, _ = w.Write([]byte(first(r.Header["Authorization"]) + "|" + r.URL.RawQuery + first(r.Header["Referer"])))
		}
	})
	cfg := up.cfg()
	none := newService(t, cfg)
	r, err := none.Do(context.Background(), Call{Method: "GET", Path: "/echo/away"}, cred())
	if err != nil || r.Status != http.StatusFound || r.Header.Get("Location") != other.URL+"/echo" {
		t.Errorf("none: %s, %s", masked(err), masked(r))
	}
	cfg.FollowRedirects = "same-origin"
	same := newService(t, cfg)
	for _, p := range []string{"/echo/away", "/echo/admin", "/echo/loop"} {
		if _, err := same.Do(context.Background(), Call{Method: "GET", Path: p}, cred()); causeOf(err) != CauseRedirect {
			t.Errorf("same-origin %s: %s; want redirect", p, masked(err))
		}
	}
	if seen := other.requests(); len(seen) != 0 {
		t.Errorf("the other origin saw %d requests", len(seen))
	}
	r, err = same.Do(context.Background(), Call{Method: "GET", Path: "/echo/here"}, cred())
	if err != nil || r.Status != 200 || string(r.Body) != "Bearer "+canary+"|x=1" {
		t.Errorf("same-origin within the paths: %s, %s", masked(err), masked(r))
	}
	cfg.Auth, cfg.QueryParam = "query", "key"
	q := newService(t, cfg)
	r, err = q.Do(context.Background(), Call{Method: "GET", Path: "/echo/here"}, cred())
	if err != nil || string(r.Body) != "|key="+canary+"&x=1" {
		t.Errorf("auth query, same-origin: %s, %s", masked(err), masked(r))
	}
}
