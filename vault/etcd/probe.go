package etcd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"time"
)

// The etcd client retries a connection that fails its TLS handshake
// until the op's deadline and then says only "context deadline exceeded":
// gRPC keeps the handshake's error to itself. So when an attempt goes
// unanswered, the members are probed directly, the way the client reaches
// them (TCP, then TLS with the same settings), and what fails is put in
// words: a certificate the CA does not sign, a client certificate the
// member refuses or that is missing, a member that does not speak TLS.
// Those are settings, which retrying cannot fix: when every member fails
// that way, the op stops at once.

// reach is what a handle needs to reach the members and say why it cannot.
type reach struct {
	endpoints []string
	tls       *tls.Config // nil: plain, unless an endpoint says https://
	user      string      // the etcd user, for messages; "": none given
}

// probeTimeout bounds one probe of every member (they are probed at once).
const probeTimeout = time.Second

// finding is why one member cannot be reached.
type finding struct {
	ep    string
	what  string // a sentence with %s where the endpoints go
	fatal bool   // a setting is wrong: trying again cannot help
}

// probe tries to reach every member; it returns a finding for each that
// fails, in the order of the endpoints. A member that answers, or whose
// endpoint cannot be probed (a unix socket), gives none.
func (r reach) probe(ctx context.Context, eps []string) []finding {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	out := make([]*finding, len(eps))
	var wg sync.WaitGroup
	for i, ep := range eps {
		wg.Go(func() { out[i] = r.probeOne(ctx, ep) })
	}
	wg.Wait()
	var fs []finding
	for _, f := range out {
		if f != nil {
			fs = append(fs, *f)
		}
	}
	return fs
}

// h2Hello is an HTTP/2 client preface and an empty SETTINGS frame: a
// member that accepted the connection answers with its own SETTINGS.
// Under TLS 1.3 the client's side of the handshake ends before the member
// has checked the client's certificate; this is when it says it refused it.
const h2Hello = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + "\x00\x00\x00\x04\x00\x00\x00\x00\x00"

// probeOne tries to reach the member at ep.
func (r reach) probeOne(ctx context.Context, ep string) *finding {
	scheme, addr, ok := strings.Cut(ep, "://")
	if !ok {
		scheme, addr = "", ep
	}
	if scheme != "" && scheme != "http" && scheme != "https" {
		return nil // unix sockets: nothing to say of them
	}
	useTLS := scheme == "https" || (scheme == "" && r.tls != nil)
	var d net.Dialer
	raw, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return &finding{ep: ep, what: "nothing accepts connections at %s (" + netCause(err) + ")"}
	}
	defer raw.Close()
	if dl, ok := ctx.Deadline(); ok {
		raw.SetDeadline(dl)
	}
	conn := raw
	if useTLS {
		tc := &tls.Config{}
		if r.tls != nil {
			tc = r.tls.Clone()
		}
		if tc.ServerName == "" {
			tc.ServerName, _, _ = net.SplitHostPort(addr)
		}
		tc.NextProtos = []string{"h2"}
		tconn := tls.Client(raw, tc)
		if err := tconn.HandshakeContext(ctx); err != nil {
			return r.tlsFinding(ep, err)
		}
		conn = tconn
	}
	var b [16]byte
	_, err = io.WriteString(conn, h2Hello)
	n := 0
	if err == nil {
		n, err = conn.Read(b[:])
	}
	switch {
	case !useTLS && (n == 0 || b[0] == 0x15 || strings.HasPrefix(string(b[:n]), "HTTP/1")) && speaksTLS(ctx, addr):
		// Closed on, or answered with a TLS alert or net/http's "400 Bad
		// Request", by a member that does a TLS handshake.
		return &finding{ep: ep, fatal: true, what: "a plain connection to %s was closed: the member asks for TLS: " +
			"set tls_ca (and tls_cert and tls_key if the members ask for a client certificate), and write https://"}
	case n > 0 || err == nil:
		return nil
	case useTLS && isRemoteAlert(err):
		return r.tlsFinding(ep, err)
	}
	return nil // no answer in time, or a closed connection: nothing certain
}

// speaksTLS reports whether the member at addr answers a TLS handshake. It
// only asks: nothing is sent over the connection, so the member's
// certificate need not be checked.
func speaksTLS(ctx context.Context, addr string) bool {
	var d net.Dialer
	raw, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return false
	}
	defer raw.Close()
	if dl, ok := ctx.Deadline(); ok {
		raw.SetDeadline(dl)
	}
	conn := tls.Client(raw, &tls.Config{InsecureSkipVerify: true}) // #nosec G402: a question, not a channel
	err = conn.HandshakeContext(ctx)
	return err == nil || isRemoteAlert(err) // an alert is TLS too (a client certificate asked for)
}

// tlsFinding puts a failed TLS handshake with ep in words.
func (r reach) tlsFinding(ep string, err error) *finding {
	var unknownCA x509.UnknownAuthorityError
	var badName x509.HostnameError
	var invalid x509.CertificateInvalidError
	var notTLS tls.RecordHeaderError
	var op *net.OpError
	haveCA := r.tls != nil && r.tls.RootCAs != nil
	haveCert := r.tls != nil && len(r.tls.Certificates) > 0
	var why string
	switch {
	case errors.As(err, &unknownCA) && haveCA:
		why = "the member's certificate is not signed by the CA in tls_ca (" + unknownCA.Error() + ")"
	case errors.As(err, &unknownCA):
		why = "the member's certificate is not signed by a CA this machine trusts: set tls_ca to the CA that signed it (" + unknownCA.Error() + ")"
	case errors.As(err, &badName):
		why = "the member's certificate is not made out to the address the endpoint names: " +
			"its subject alternative names must include it (" + badName.Error() + ")"
	case errors.As(err, &invalid):
		why = "the member's certificate is not valid (" + invalid.Error() + ")"
	case errors.As(err, &notTLS):
		why = "the member does not speak TLS on that port (" + notTLS.Error() + ")"
	case errors.As(err, &op) && op.Op == "remote error" && !haveCert:
		why = "the member asks for a client certificate, and none is set (tls_cert and tls_key) (" + err.Error() + ")"
	case errors.As(err, &op) && op.Op == "remote error" && strings.Contains(op.Err.Error(), "certificate"):
		why = "the member refused the client certificate in tls_cert: it must be signed by a CA the members trust " +
			"(their --trusted-ca-file) and be valid now (" + err.Error() + ")"
	case errors.As(err, &op) && op.Op == "remote error":
		why = "the member refused the connection (" + err.Error() + ")"
	default:
		// A connection cut or a handshake not done in time says nothing
		// of the settings.
		return &finding{ep: ep, what: "TLS handshake with %s failed (" + netCause(err) + ")"}
	}
	return &finding{ep: ep, fatal: true, what: "TLS handshake with %s failed: " + why}
}

// isRemoteAlert reports whether err is a TLS alert the member sent.
func isRemoteAlert(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "remote error"
}

// netCause is err without the addresses a net.OpError repeats.
func netCause(err error) string {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err.Error()
	}
	return err.Error()
}

// allFatal reports whether every endpoint has a fatal finding.
func allFatal(fs []finding, eps []string) bool {
	if len(fs) != len(eps) {
		return false
	}
	for _, f := range fs {
		if !f.fatal {
			return false
		}
	}
	return true
}

// describe puts findings in one line, members that fail the same way
// named together: "TLS handshake with A, B and C failed: ...".
func describe(fs []finding) string {
	var order []string
	eps := map[string][]string{}
	for _, f := range fs {
		if _, ok := eps[f.what]; !ok {
			order = append(order, f.what)
		}
		eps[f.what] = append(eps[f.what], f.ep)
	}
	parts := make([]string, len(order))
	for i, what := range order {
		parts[i] = strings.Replace(what, "%s", andList(eps[what]), 1) // the first %s is the template's
	}
	return strings.Join(parts, "; ")
}

// andList is "a", "a and b", "a, b and c".
func andList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}
