package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
)

// BenchmarkProxy compares a GET of a 1 KiB body made directly to the
// upstream with the same GET through the proxy (decided, the credential
// read, sent, scrubbed and audited), both over kept-alive connections,
// the upstream over HTTPS.
// SPEC §13's measure: proxied at most 1.5 times direct.
func BenchmarkProxy(b *testing.B) {
	body := strings.Repeat("a", 1<<10)
	f := newFixture(b, service("b", `auth = "bearer"`), func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, body)
	}, "b")
	direct := f.upstream.Client()
	proxied := &http.Client{Transport: &http.Transport{Proxy: nil}}
	run := func(b *testing.B, client *http.Client, url string, h http.Header) {
		for b.Loop() {
			req, _ := http.NewRequest("GET", url, nil)
			req.Header = h
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			n, _ := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || n != int64(len(body)) {
				b.Fatalf("%d, %d bytes", resp.StatusCode, n)
			}
		}
	}
	b.Run("direct", func(b *testing.B) { run(b, direct, f.upstream.URL+"/x", http.Header{}) })
	// The floor of any loopback proxy: the standard library's own reverse
	// proxy, nothing decided, nothing scrubbed, over the same extra hop.
	target, _ := url.Parse(f.upstream.URL)
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = f.upstream.Client().Transport
	bare := httptest.NewServer(rp)
	b.Cleanup(bare.Close)
	b.Run("bare", func(b *testing.B) { run(b, proxied, bare.URL+"/x", http.Header{}) })
	b.Run("proxied", func(b *testing.B) {
		run(b, proxied, f.p.BaseURLs()["b"]+"/x", http.Header{"Authorization": {"Bearer " + f.p.Token()}})
	})
}
