// Package upstreamtest starts the HTTPS upstreams the tests of the uses
// call: a server of its own CA, whose certificate a service's tls_ca
// names.
package upstreamtest

import (
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

// StartTLS starts h on an HTTPS server of its own CA, HTTP/2 on and its
// error log silent (tests break connections on purpose), and writes the
// server's certificate, PEM, to a file for a service's tls_ca, whose path
// it returns. The server is closed when tb ends.
func StartTLS(tb testing.TB, h http.Handler) (srv *httptest.Server, caFile string) {
	tb.Helper()
	srv = httptest.NewUnstartedServer(h)
	srv.EnableHTTP2 = true
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	tb.Cleanup(srv.Close)
	caFile = filepath.Join(tb.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		tb.Fatal(err)
	}
	return srv, caFile
}
