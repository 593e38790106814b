package upstream

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"strings"
	"testing"
)

// kibUpstream is a local TLS upstream that answers every request with
// the 1 KiB body kib.
func kibUpstream(b *testing.B) (up *upstreamServer, kib string) {
	kib = strings.Repeat("k", 1024)
	return newUpstream(b, func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, kib) }), kib
}

// BenchmarkDo is a 1 KiB GET through Service.Do against a local TLS
// upstream, its connection kept alive.
func BenchmarkDo(b *testing.B) {
	up, kib := kibUpstream(b)
	s := newService(b, up.cfg())
	c := Call{Method: "GET", Path: "/echo"}
	for b.Loop() {
		r, err := s.Do(context.Background(), c, cred())
		if err != nil || len(r.Body) != len(kib) {
			b.Fatalf("%s, %d bytes", masked(err), len(r.Body))
		}
	}
}

// BenchmarkDirect is the same GET made by a plain http.Client over a kept
// alive connection, HTTP/2 as Do speaks it.
func BenchmarkDirect(b *testing.B) {
	up, kib := kibUpstream(b)
	roots := x509.NewCertPool()
	roots.AddCert(up.Certificate())
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, ForceAttemptHTTP2: true}
	b.Cleanup(tr.CloseIdleConnections)
	client := &http.Client{Transport: tr}
	for b.Loop() {
		resp, err := client.Get(up.URL + "/echo")
		if err != nil {
			b.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil || len(body) != len(kib) || resp.ProtoMajor != 2 {
			b.Fatalf("%v, %d bytes, %s", err, len(body), resp.Proto)
		}
	}
}
