package etcd

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arca-secrets/arca/vault/identity"
)

// testCA is a CA that makes certificates for the fake members below.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
	pem  []byte
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pool: pool, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue makes a certificate for cn, valid until notAfter, for the IPs
// given (a client certificate when there are none).
func (ca *testCA) issue(t *testing.T, cn string, notAfter time.Time, ips ...string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-2 * time.Hour), NotAfter: notAfter,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	for _, ip := range ips {
		tmpl.IPAddresses = append(tmpl.IPAddresses, net.ParseIP(ip))
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
}

// fakeMember listens on loopback as a member would: TLS with cfg (plain
// when nil), then it answers an HTTP/2 preface with a few bytes, as a
// member's SETTINGS. It returns its address.
func fakeMember(t *testing.T, cfg *tls.Config) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				if cfg != nil {
					tc := tls.Server(c, cfg)
					if tc.Handshake() != nil {
						return
					}
					c = tc
				}
				b := make([]byte, len(h2Hello))
				if _, err := io.ReadFull(c, b); err == nil {
					c.Write([]byte("\x00\x00\x00\x04\x00\x00\x00\x00\x00"))
				}
				io.Copy(io.Discard, c)
			}()
		}
	}()
	return l.Addr().String()
}

// TestProbe puts each way of failing to reach a member in words, and says
// nothing of one that answers.
func TestProbe(t *testing.T) {
	ca, stray := newTestCA(t, "members-ca"), newTestCA(t, "members-ca")
	later := time.Now().Add(time.Hour)
	member := ca.issue(t, "m1", later, "127.0.0.1")
	client := ca.issue(t, "ana", later)
	strayClient := stray.issue(t, "ana", later)
	server := func(c tls.Certificate, clientAuth tls.ClientAuthType, maxVersion uint16) *tls.Config {
		return &tls.Config{Certificates: []tls.Certificate{c}, ClientAuth: clientAuth, ClientCAs: ca.pool, MaxVersion: maxVersion}
	}
	mtls := server(member, tls.RequireAndVerifyClientCert, 0)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := closed.Addr().String()
	closed.Close()
	for _, c := range []struct {
		name   string
		server *tls.Config // nil: plain
		addr   string      // instead of a fake member
		client *tls.Config // nil: plain
		fatal  bool
		want   string // "": no finding
	}{
		{name: "answers", server: mtls, client: &tls.Config{RootCAs: ca.pool, Certificates: []tls.Certificate{client}}},
		{name: "answers plain", client: nil},
		{name: "CA not the members'", server: mtls, client: &tls.Config{RootCAs: stray.pool, Certificates: []tls.Certificate{client}}, fatal: true,
			want: "TLS handshake with %s failed: the member's certificate is not signed by the CA in tls_ca (x509: certificate signed by unknown authority"},
		{name: "no CA and not a known one", server: mtls, client: &tls.Config{Certificates: []tls.Certificate{client}}, fatal: true,
			want: "not signed by a CA this machine trusts: set tls_ca"},
		{name: "certificate for another address", server: server(ca.issue(t, "m1", later, "127.0.0.2"), tls.NoClientCert, 0),
			client: &tls.Config{RootCAs: ca.pool}, fatal: true, want: "the member's certificate is not made out to the address the endpoint names"},
		{name: "expired certificate", server: server(ca.issue(t, "m1", time.Now().Add(-time.Hour), "127.0.0.1"), tls.NoClientCert, 0),
			client: &tls.Config{RootCAs: ca.pool}, fatal: true, want: "the member's certificate is not valid (x509: certificate has expired"},
		{name: "no client certificate, TLS 1.3", server: mtls, client: &tls.Config{RootCAs: ca.pool}, fatal: true,
			want: "the member asks for a client certificate, and none is set (tls_cert and tls_key)"},
		{name: "no client certificate, TLS 1.2", server: server(member, tls.RequireAndVerifyClientCert, tls.VersionTLS12),
			client: &tls.Config{RootCAs: ca.pool}, fatal: true, want: "the member asks for a client certificate"},
		{name: "client certificate of another CA", server: mtls, client: &tls.Config{RootCAs: ca.pool, Certificates: []tls.Certificate{strayClient}},
			fatal: true, want: "the member refused the client certificate in tls_cert"},
		{name: "plain to TLS", server: mtls, client: nil, fatal: true, want: "a plain connection to %s was closed: the member asks for TLS"},
		{name: "TLS to plain", client: &tls.Config{RootCAs: ca.pool}, fatal: true, want: "the member does not speak TLS on that port"},
		{name: "refused", addr: refused, client: &tls.Config{RootCAs: ca.pool}, want: "nothing accepts connections at %s (connect: connection refused)"},
	} {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			addr := c.addr
			if addr == "" {
				addr = fakeMember(t, c.server)
			}
			ep := "https://" + addr
			if c.client == nil {
				ep = "http://" + addr
			}
			r := reach{endpoints: []string{ep}, tls: c.client}
			start := time.Now()
			fs := r.probe(context.Background(), r.endpoints)
			if took := time.Since(start); took > probeTimeout+100*time.Millisecond {
				t.Errorf("the probe took %v", took)
			}
			if c.want == "" {
				if len(fs) != 0 {
					t.Errorf("findings %+v, want none", fs)
				}
				return
			}
			want := strings.Replace(c.want, "%s", ep, 1)
			if len(fs) != 1 || fs[0].fatal != c.fatal || !strings.Contains(describe(fs), want) {
				t.Fatalf("findings %+v (%q), want one, fatal %t, saying %q", fs, describe(fs), c.fatal, want)
			}
			if allFatal(fs, r.endpoints) != c.fatal {
				t.Errorf("allFatal: %t, want %t", !c.fatal, c.fatal)
			}
		})
	}
}

// Members that fail the same way are named together; a member that
// answers keeps the others' failures from ending an op.
func TestDescribeFindings(t *testing.T) {
	tlsBad := "TLS handshake with %s failed: the member's certificate is not signed by the CA in tls_ca (x509: certificate signed by unknown authority)"
	fs := []finding{{"a:1", tlsBad, true}, {"b:2", tlsBad, true}, {"c:3", "nothing accepts connections at %s (connect: connection refused)", false}}
	want := "TLS handshake with a:1 and b:2 failed: the member's certificate is not signed by the CA in tls_ca (x509: certificate signed by unknown authority); " +
		"nothing accepts connections at c:3 (connect: connection refused)"
	if got := describe(fs); got != want {
		t.Errorf("describe:\n%s\nwant\n%s", got, want)
	}
	if allFatal(fs, []string{"a:1", "b:2", "c:3"}) || allFatal(fs[:2], []string{"a:1", "b:2", "c:3"}) || !allFatal(fs[:2], []string{"a:1", "b:2"}) {
		t.Error("allFatal: a member that is not fatally unreachable must keep the op going")
	}
}

// An op on members whose certificate tls_ca did not sign, and a login to
// them, stop as soon as a probe says so, naming the members, well within
// the op's deadline, and without the password.
func TestOpenWrongCA(t *testing.T) {
	ca, stray := newTestCA(t, "members-ca"), newTestCA(t, "members-ca")
	member := ca.issue(t, "m1", time.Now().Add(time.Hour), "127.0.0.1")
	addr := fakeMember(t, &tls.Config{Certificates: []tls.Certificate{member}})
	dir := t.TempDir()
	idPath, caPath := filepath.Join(dir, "identity.txt"), filepath.Join(dir, "ca.pem")
	if _, _, err := identity.Ensure(idPath, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(caPath, stray.pem, 0o600); err != nil {
		t.Fatal(err)
	}
	const canary = "CANARY-pr0be-pa55"
	const timeout = 3 * time.Second
	base := Options{Endpoints: []string{addr}, Prefix: "/arca/x/", Identity: idPath, CAFile: caPath, Timeout: timeout}
	withLogin := base
	withLogin.Username, withLogin.Password = "ana", canary
	for name, o := range map[string]Options{"op": base, "login": withLogin} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			e, err := Open(o)
			if err == nil {
				defer e.Close()
				_, err = e.Get(context.Background(), "app/db")
			}
			took := time.Since(start)
			want := "cannot connect: TLS handshake with " + addr + " failed: the member's certificate is not signed by the CA in tls_ca"
			if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), canary) || strings.Contains(err.Error(), "deadline") {
				t.Errorf("%v, want an error saying %q", err, want)
			}
			if took > timeout/2 {
				t.Errorf("took %v, want well within the deadline of %v", took, timeout)
			}
		})
	}
	// check says the same of each member it cannot ask.
	e, err := Open(base)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	rep, err := e.Check(context.Background())
	want := "etcd member " + addr + " does not answer: TLS handshake with " + addr + " failed: the member's certificate is not signed by the CA in tls_ca"
	if err != nil || len(rep.Problems) == 0 || !strings.Contains(rep.Problems[0], want) {
		t.Errorf("check: %v, %q; want a problem saying %q", err, rep.Problems, want)
	}
}
