package proxy

import (
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/arca-secrets/arca/internal/scrub"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/config"
	"github.com/arca-secrets/arca/ops/upstream"
)

// bodyTimeout bounds the reading of a request's body.
const bodyTimeout = time.Minute

// forward has ops decide r (its token already taken out) as a request to
// service name's path rest, sends it, and relays the answer. A request
// that still holds the token elsewhere is refused (bad_request): the
// token goes no further than the proxy.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, name, rest string, svc config.Service, g Grant, token string) {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(bodyTimeout)) // a slow body holds its slot no longer
	body, ok, err := readBody(r)
	_ = rc.SetReadDeadline(time.Time{})
	switch {
	case err != nil:
		p.refuse(w, r, name, svc, http.StatusBadRequest, manifest.BadRequest, "the request body could not be read")
		return
	case !ok:
		p.refuse(w, r, name, svc, http.StatusRequestEntityTooLarge, manifest.BadRequest,
			fmt.Sprintf("the request body is longer than %d bytes", manifest.MaxBody))
		return
	}
	query, err := parseQuery(r.URL.RawQuery)
	if err != nil {
		p.refuse(w, r, name, svc, http.StatusBadRequest, manifest.BadRequest, "the query is not valid")
		return
	}
	if carriesToken(r, token) {
		p.refuse(w, r, name, svc, http.StatusBadRequest, manifest.BadRequest,
			"the request carries the session's token outside where the service's credential goes: never sent on")
		return
	}
	ctx := r.Context()
	px, err := p.o.Service.BeginProxied(ctx, ops.ProxyRequest{
		Service: name, Method: r.Method, Path: rest, Query: query, Header: outbound(r), Body: body,
		Env: g.Env, Actor: g.Actor, Scrub: p.o.Scrub,
	})
	if err != nil {
		writeOpsError(w, err)
		return
	}
	resp, err := px.Open(ctx)
	if err != nil {
		writeOpsError(w, err)
		return
	}
	defer resp.Body.Close()
	// The answer is written within the service's timeout, as upstream's is
	// read: a client that stops reading holds its slot no longer.
	_ = rc.SetWriteDeadline(time.Now().Add(serviceTimeout(svc)))
	p.relay(w, px, resp)
}

// relay passes resp on, its header values scrubbed and its body through a
// scrub stream, flushed as bytes come, and writes the request's event. A body cut short (at the service's cap, by
// a failed upstream read or a client gone) ends with the stream cut and
// the connection aborted once the event is written.
func (p *Proxy) relay(w http.ResponseWriter, px *ops.Proxied, resp *http.Response) {
	set := px.Scrub(p.o.Scrub)
	redactions := scrubHeader(w.Header(), resp.Header, set, px)
	w.WriteHeader(resp.StatusCode)
	fw := &flushWriter{w: w, rc: http.NewResponseController(w)}
	st := set.NewStream(fw)
	buf := p.bufs.Get().(*[]byte)
	n, err := pass(st, resp.Body, *buf, fw)
	p.bufs.Put(buf)
	ub, _ := resp.Body.(*upstream.Body)
	cut := err != nil || ub != nil && ub.Truncated()
	if cut {
		_ = st.Cut()
	} else {
		_ = st.Close()
	}
	for _, rd := range st.Redactions() {
		redactions += rd.Count
	}
	if err := px.Finish(n, redactions); err != nil || cut {
		panic(http.ErrAbortHandler) // the client sees a response that did not end
	}
}

// scrubHeader sets the headers of the answer to from's (but
// Content-Length: the body passed on is not the upstream's), each value
// scrubbed against set, and returns the placeholders written. A header
// whose name holds a value (px.ScrubName) is left out: a placeholder is
// no header name.
func scrubHeader(to, from http.Header, set *scrub.Set, px *ops.Proxied) int {
	n := 0
	for k, vs := range from {
		if _, named := px.ScrubName(set, k); named > 0 {
			n += named
			continue
		}
		if k == "Content-Length" {
			continue
		}
		for _, v := range vs {
			out, rds := set.Scrub([]byte(v))
			to[k] = append(to[k], string(out))
			for _, rd := range rds {
				n += rd.Count
			}
		}
	}
	return n
}

// pass copies body into w through buf until body ends: the bytes read
// from body, and the error that stopped it early (nil at the body's end).
// The bytes that come with the body's end are not flushed through fw: the
// handler's return sends them with the response's end.
func pass(w io.Writer, body io.Reader, buf []byte, fw *flushWriter) (int64, error) {
	var n int64
	for {
		k, err := body.Read(buf)
		n += int64(k)
		fw.hold = err == io.EOF
		if k > 0 {
			if _, werr := w.Write(buf[:k]); werr != nil {
				return n, werr
			}
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// flushWriter flushes every write through to the client, so that a long
// answer streams; but for the last (hold).
type flushWriter struct {
	w    io.Writer
	rc   *http.ResponseController
	hold bool
}

func (f *flushWriter) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if err != nil || f.hold {
		return n, err
	}
	return n, f.rc.Flush()
}

// serviceTimeout is svc's timeout_ms, or its default.
func serviceTimeout(svc config.Service) time.Duration {
	ms := svc.TimeoutMS
	if ms <= 0 {
		ms = config.DefaultServiceTimeoutMS
	}
	return time.Duration(ms) * time.Millisecond
}
