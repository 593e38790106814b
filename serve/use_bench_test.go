package serve

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arca-secrets/arca/ops/upstream/upstreamtest"
)

// The benchmarks of the http use (SPEC §13; issue 30's "Measured by"),
// each a ratio against a baseline measured in the same run:
//   - BenchmarkHTTPUseVsClient: a GET of a 1 KiB body through a session,
//     one at a time, against the same GET made by an http.Client over a
//     kept-alive connection;
//   - BenchmarkHTTPUsePipelined: 64 http ops against an upstream that
//     answers in 50 ms, sent at once, against 64 sent one after the
//     other's answer.

// useToken is the credential of the benchmarks' service.
const useToken = "bench-token-5d0c2e-of-some-length"

// tlsUpstream starts an HTTPS server (HTTP/2 on) of its own CA answering
// through handle, and writes its certificate, PEM, to a file for tls_ca.
func tlsUpstream(b *testing.B, handle http.HandlerFunc) (srv *httptest.Server, caFile string) {
	b.Helper()
	return upstreamtest.StartTLS(b, handle)
}

// useFixture is a HOME whose config has the service "up" on srv (bearer
// auth, GET of /kib, its CA given, private addresses allowed: srv is on
// loopback), its credential put in the default env.
func benchUseFixture(b *testing.B, srv *httptest.Server, caFile string) *fixture {
	b.Helper()
	f := newFixtureConfig(b, fmt.Sprintf(`[services.up]
base_url = %s
credential = "arca://app/token"
auth = "bearer"
paths = ["/kib"]
tls_ca = %s
allow_private = true
`, quoteTOML(srv.URL), quoteTOML(caFile)))
	put := `{"id":1,"op":"put","ref":"arca://app/token","value":"` + useToken + `"}` + "\n"
	if out := runSession(b, f, 0, []byte(put)); !bytes.Contains(out, []byte(`"ok":true`)) {
		b.Fatalf("put: %s", out)
	}
	return f
}

// httpUseLine is the http op the benchmarks send.
const httpUseLine = `{"id":%d,"op":"http","service":"up","method":"GET","path":"/kib"}` + "\n"

// BenchmarkHTTPUseVsClient measures a GET of a 1 KiB body from a local
// TLS upstream, one request at a time, four ways that take turns in one
// run, a few requests each, so that they share whatever else the machine
// is doing:
//   - serve: through one session (in this process, over real pipes), a
//     request line written and its answer read before the next;
//   - serve-one: the same through a session with Options.MaxReads 1, whose
//     loop makes the use itself: no reader goroutine, no line read ahead;
//   - get: a get of the credential through the first session, the same
//     round trip with no upstream (pipes, decoding, the vault's read, the
//     audit event): what serve adds to any request;
//   - client: an http.Client over a kept-alive connection, HTTP/2 as the
//     service's client speaks it.
//
// Reported for each: the mean and the median time of a request, and this
// process's CPU (user+system, the upstream's included, as it is in every
// way) per request; and serve/client of each, the target being at most
// 1.5. The median is the steadier on a busy machine.
func BenchmarkHTTPUseVsClient(b *testing.B) {
	kib := strings.Repeat("k", 1024)
	srv, caFile := tlsUpstream(b, func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, kib) })
	f := benchUseFixture(b, srv, caFile)
	many, one := startPiped(b, f, 0), startPiped(b, f, 1)
	client := directClient(b, caFile)
	ways := []struct {
		name string
		run  func(n int)
	}{
		{"serve", func(n int) { many.lockstep(b, n) }},
		{"serve-one", func(n int) { one.lockstep(b, n) }},
		{"get", func(n int) { many.getLockstep(b, n) }},
		{"client", func(n int) { clientGets(b, client, srv.URL+"/kib", len(kib), n) }},
	}
	// Each is warmed first, untimed: the connections made, the session's
	// readers started.
	for _, w := range ways {
		w.run(50)
	}
	const turn = 20 // requests of one way before the next way's turn
	took := make([][]time.Duration, len(ways))
	cpu := make([]time.Duration, len(ways))
	for b.Loop() {
		for range 10 {
			for i, w := range ways {
				c0 := cpuTime(b)
				for range turn {
					t0 := time.Now()
					w.run(1)
					took[i] = append(took[i], time.Since(t0))
				}
				cpu[i] += cpuTime(b) - c0
			}
		}
	}
	mean, median := make([]float64, len(ways)), make([]float64, len(ways))
	for i, w := range ways {
		n := float64(len(took[i]))
		var sum time.Duration
		for _, d := range took[i] {
			sum += d
		}
		slices.Sort(took[i])
		mean[i], median[i] = float64(sum)/n, float64(took[i][len(took[i])/2])
		b.ReportMetric(mean[i], w.name+"-ns/op")
		b.ReportMetric(median[i], w.name+"-p50-ns/op")
		b.ReportMetric(float64(cpu[i])/n, w.name+"-cpu-ns/op")
	}
	b.ReportMetric(mean[0]/mean[3], "serve/client")
	b.ReportMetric(median[0]/median[3], "serve/client-p50")
	b.ReportMetric(float64(cpu[0])/float64(cpu[3]), "serve/client-cpu")
}

// clientGets makes n GETs of url with client, each body of size bytes.
func clientGets(b *testing.B, client *http.Client, url string, size, n int) {
	for range n {
		resp, err := client.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil || len(body) != size || resp.ProtoMajor != 2 {
			b.Fatalf("%v, %d bytes, %s", err, len(body), resp.Proto)
		}
	}
}

// directClient is an http.Client trusting caFile's certificate, HTTP/2
// on, its connections kept alive.
func directClient(b *testing.B, caFile string) *http.Client {
	b.Helper()
	pemBytes, err := os.ReadFile(caFile)
	if err != nil {
		b.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pemBytes)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, ForceAttemptHTTP2: true}
	b.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// BenchmarkHTTPUsePipelined measures 64 http ops against an upstream that
// answers each request 50 ms after it came, two ways in one run, on one
// session:
//   - pipelined: the 64 lines written at once, the answers read as they
//     come (the session runs at most manifest.MaxUses at a time);
//   - sequential: each line written once the answer before it is read.
//
// Reported: each one's time for the 64 and sequential/pipelined, the
// target being at least 6.
func BenchmarkHTTPUsePipelined(b *testing.B) {
	const ops, delay = 64, 50 * time.Millisecond
	srv, caFile := tlsUpstream(b, func(w http.ResponseWriter, _ *http.Request) {
		<-time.After(delay) // the upstream's latency
		_, _ = io.WriteString(w, "slow answer")
	})
	p := startPiped(b, benchUseFixture(b, srv, caFile), 0)
	p.lockstep(b, 1) // the connection made, untimed

	var pipeT, seqT time.Duration
	runs := 0
	for b.Loop() {
		t0 := time.Now()
		p.pipelined(b, ops)
		t1 := time.Now()
		p.lockstep(b, ops)
		t2 := time.Now()
		pipeT, seqT = pipeT+t1.Sub(t0), seqT+t2.Sub(t1)
		runs++
	}
	fr := float64(runs)
	b.ReportMetric(float64(pipeT.Milliseconds())/fr, "pipelined-ms/64")
	b.ReportMetric(float64(seqT.Milliseconds())/fr, "sequential-ms/64")
	b.ReportMetric(float64(seqT)/float64(pipeT), "sequential/pipelined")
}

// lockstep sends n http ops, each once the answer before it is read.
func (p *pipedSession) lockstep(b *testing.B, n int) {
	for i := range n {
		if _, err := fmt.Fprintf(p.in, httpUseLine, i); err != nil {
			b.Fatal(err)
		}
		p.answer(b, i, n)
	}
}

// getLockstep gets the credential n times, each once the answer before
// it is read.
func (p *pipedSession) getLockstep(b *testing.B, n int) {
	for i := range n {
		if _, err := fmt.Fprintf(p.in, `{"id":%d,"op":"get","ref":"arca://app/token"}`+"\n", i); err != nil {
			b.Fatal(err)
		}
		if !p.out.Scan() || !bytes.Contains(p.out.Bytes(), []byte(`"ok":true`)) {
			b.Fatalf("get %d of %d: %v", i+1, n, p.out.Err())
		}
	}
}

// pipelined writes n http ops at once and reads their n answers.
func (p *pipedSession) pipelined(b *testing.B, n int) {
	var lines []byte
	for i := range n {
		lines = fmt.Appendf(lines, httpUseLine, i)
	}
	sent := make(chan error, 1)
	go func() {
		_, err := p.in.Write(lines)
		sent <- err
	}()
	for i := range n {
		p.answer(b, i, n)
	}
	if err := <-sent; err != nil {
		b.Fatal(err)
	}
}

// answer reads the answer to the i-th of n http ops, which must be ok
// with an upstream status 200.
func (p *pipedSession) answer(b *testing.B, i, n int) {
	if !p.out.Scan() {
		b.Fatalf("answer %d of %d: %v", i+1, n, p.out.Err())
	}
	if line := p.out.Bytes(); !bytes.Contains(line, []byte(`"ok":true`)) || !bytes.Contains(line, []byte(`"status":200`)) {
		b.Fatalf("answer %d of %d: %s", i+1, n, line)
	}
}
