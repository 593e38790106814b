package pdp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"syscall"
	"time"
)

// An HTTP PDP (Config.URL) is a policy engine already running as a server,
// on loopback or a unix socket. Each decision is one POST with a JSON body,
// on a connection of its own, closed once the response is read:
//
//   - api opa: OPA's REST data API. The body is {"input": <the request an
//     exec PDP reads>}; the verdict is the response's "result", either a
//     verdict object (the exec PDP's shape, parsed as strictly) or a bare
//     boolean (allow, with no reason). A response without "result" — the
//     policy's result is undefined — is unreachable, never an allow.
//   - api authzen: the OpenID AuthZEN 1.0 access evaluation (authzen.go).
//
// A response is taken only as the answer of the one request its connection
// carried. On a kept-alive connection responses are paired with requests
// by their order alone (HTTP/1.1 carries no request id, and OPA's data API
// echoes nothing of the input): a server that wrote one answer twice, the
// copy late, would have the copy read as the answer of the next request on
// that connection. A connection per decision leaves such a copy nowhere to
// go; the price is a dial per decision (and the server's accept), on
// loopback or a unix socket, dialled ahead of the decision that uses it
// (spare.go): a connection that has carried nothing, so no copy of an
// earlier answer can be on it. Each answer is one evaluation, never a batch
// whose items are matched by position, so nothing else can be paired
// wrongly.
//
// Bounds, per decision: Config.Timeout covers the request from dial to the
// end of the body; the response body is read up to MaxVerdict bytes (a
// longer one is unreachable) and its headers up to maxHeader; only status
// 200 counts, and no redirect is followed (a 3xx is unreachable); no proxy
// is used, whatever the environment says; a TCP connection is made only to
// a loopback address, checked on the address dialled. Nothing is cached.
type httpPDP struct {
	api     string
	url     string
	timeout time.Duration
	problem string // a config problem: every decision is unreachable with it
	client  *http.Client
	tr      *http.Transport
	spare   *spareDialer
	closed  context.Context // done once Close runs: it ends the decisions in flight
	close   context.CancelFunc
}

// maxHeader bounds the response headers of an HTTP PDP.
const maxHeader = 64 << 10

func newHTTP(cfg Config) *httpPDP {
	ep, why := parseEndpoint(cfg.URL, cfg.HTTPPath, cfg.API)
	h := &httpPDP{api: cfg.API, url: ep.url, timeout: cfg.Timeout, problem: why}
	h.closed, h.close = context.WithCancel(context.Background())
	if why != "" {
		return h
	}
	h.spare = &spareDialer{dial: dialer(ep), maxAge: spareAge}
	h.tr = &http.Transport{
		Proxy:                  nil, // never $HTTP_PROXY: the PDP is local
		DialContext:            h.spare.DialContext,
		DisableCompression:     true, // the cap applies to the bytes sent
		DisableKeepAlives:      true, // one request per connection: see above
		MaxResponseHeaderBytes: maxHeader,
	}
	h.client = &http.Client{
		Transport:     h.tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return h
}

// dialer connects to ep whatever address the request names: the socket, or
// the loopback host and port.
func dialer(ep endpoint) func(ctx context.Context) (net.Conn, error) {
	d := &net.Dialer{Control: dialLoopback}
	if ep.network == "unix" {
		d = &net.Dialer{}
	}
	return func(ctx context.Context) (net.Conn, error) {
		return d.DialContext(ctx, ep.network, ep.address)
	}
}

// dialLoopback refuses, before it connects, a TCP address that is not
// loopback (localhost that resolves elsewhere, say).
func dialLoopback(network, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return errors.New("not a loopback address")
	}
	return nil
}

// Decide sends one request and reads one verdict.
func (h *httpPDP) Decide(ctx context.Context, req Request) (Verdict, error) {
	switch {
	case h.problem != "":
		return Verdict{}, unreachable(h.problem)
	case h.timeout <= 0:
		return Verdict{}, unreachable("timeout must be positive")
	case h.closed.Err() != nil:
		return Verdict{}, unreachable(whyClosed)
	case ctx.Err() != nil:
		return Verdict{}, unreachable(doneWhy(ctx, h.timeout))
	}
	body, err := h.encode(req)
	if err != nil {
		return Verdict{}, err
	}
	dctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	defer context.AfterFunc(h.closed, cancel)()
	b, why := h.post(dctx, body)
	switch {
	case why == whyDeadline && h.closed.Err() != nil:
		why = whyClosed
	case why == whyDeadline:
		why = doneWhy(ctx, h.timeout)
	}
	if why != "" {
		return Verdict{}, unreachable(why)
	}
	v, why := h.parse(b)
	if why != "" {
		return Verdict{}, unreachable(why)
	}
	return v, nil
}

// post sends body and returns the response body, at most MaxVerdict bytes
// of a 200, or why there is none (whyDeadline when ctx ended).
func (h *httpPDP) post(ctx context.Context, body []byte) ([]byte, string) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return nil, "cannot make the request: " + err.Error()
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	resp, err := h.client.Do(hreq)
	if err != nil {
		if ctx.Err() != nil {
			return nil, whyDeadline
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, "cannot reach the " + h.api + " server: " + err.Error()
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, "answered HTTP " + strconv.Itoa(resp.StatusCode)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxVerdict+1))
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, whyDeadline
	case err != nil:
		return nil, "cannot read the response: " + err.Error()
	case len(b) > MaxVerdict:
		return nil, "response larger than " + strconv.Itoa(MaxVerdict) + " bytes"
	}
	return b, ""
}

func (h *httpPDP) encode(req Request) ([]byte, error) {
	if h.api == APIAuthZEN {
		return encodeAuthZEN(req)
	}
	return encodeOPA(req)
}

func (h *httpPDP) parse(b []byte) (Verdict, string) {
	if h.api == APIAuthZEN {
		return parseAuthZEN(b)
	}
	return parseOPA(b)
}

// Close fails the decisions in flight and later ones, and closes the
// connection dialled ahead (no other is kept).
func (h *httpPDP) Close() error {
	h.close()
	if h.tr != nil {
		h.tr.CloseIdleConnections()
		h.spare.Close()
	}
	return nil
}
