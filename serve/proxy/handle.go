package proxy

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/config"
)

// ServeHTTP answers one request to the proxy: routed by the first segment
// of its path to a service, its token checked, then decided, sent and
// streamed back (see forward).
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !p.enter() {
		writeError(w, http.StatusServiceUnavailable, "unavailable", "the proxy is closing")
		return
	}
	defer p.inflight.Done()
	name, rest := route(r.URL.EscapedPath())
	token, valid, g, ok := p.grantFor(name)
	if !ok {
		writeError(w, http.StatusNotFound, "not_found", "no service is served at this path")
		return
	}
	svc := p.o.Services[name]
	if why := checkToken(r, svc, token, valid); why != "" {
		p.unauthorized(w, r, name, svc, why)
		return
	}
	if !p.acquire(r.Context()) {
		writeError(w, http.StatusServiceUnavailable, "unavailable", "the request ended while waiting for a slot")
		return
	}
	defer func() { <-p.slots }()
	p.forward(w, r, name, rest, svc, g, token)
}

// acquire takes one of the manifest.MaxUses slots, waiting for one as
// long as ctx lasts; false when ctx ended first.
func (p *Proxy) acquire(ctx context.Context) bool {
	select {
	case p.slots <- struct{}{}:
		return true
	default:
	}
	if p.onWait != nil {
		p.onWait()
	}
	select {
	case p.slots <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// route splits an escaped path into the service name (its first segment)
// and the rest, "/" when there is none.
func route(escaped string) (name, rest string) {
	name, rest, found := strings.Cut(strings.TrimPrefix(escaped, "/"), "/")
	if !found {
		return name, "/"
	}
	return name, "/" + rest
}

// checkToken reports why r does not carry token where svc's credential
// goes ("" when it does, and the token is still valid), and takes the
// token's carrier out of r when it does.
func checkToken(r *http.Request, svc config.Service, token string, valid bool) string {
	var got string
	var carried bool
	switch svc.Auth {
	case "bearer":
		if vs := r.Header.Values("Authorization"); len(vs) == 1 {
			scheme, rest, _ := strings.Cut(vs[0], " ")
			got, carried = rest, strings.EqualFold(scheme, "Bearer")
		}
	case "basic":
		if len(r.Header.Values("Authorization")) == 1 {
			_, got, carried = r.BasicAuth()
		}
	case "header":
		if vs := r.Header.Values(svc.Header); len(vs) == 1 {
			got, carried = vs[0], true
		}
	case "query":
		if vs, ok := r.URL.Query()[svc.QueryParam]; ok && len(vs) == 1 {
			got, carried = vs[0], true
		}
	}
	switch {
	case !carried:
		return "the request carries no token where the service's credential goes"
	case subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1:
		return "the request's token is not the session's"
	case !valid:
		return "the session's token has expired"
	}
	dropCarrier(r, svc)
	return ""
}

// carriesToken reports whether r (its carrier taken out) still holds
// token: in a header's name (in any case: net/http changed the case of
// the name sent) or value, the path or the query, as sent or decoded
// once. Such a request is never sent on: the upstream would receive the
// token. A body is content, not a carrier (an agent's transcript sent to
// an LLM may quote the token), and is not searched.
func carriesToken(r *http.Request, token string) bool {
	in := func(s string) bool {
		dec, err := url.PathUnescape(s)
		return strings.Contains(s, token) || err == nil && strings.Contains(dec, token)
	}
	for k, vs := range r.Header {
		if strings.Contains(strings.ToLower(k), strings.ToLower(token)) || slices.ContainsFunc(vs, in) {
			return true
		}
	}
	return in(r.URL.EscapedPath()) || in(r.URL.RawQuery)
}

// dropCarrier takes the token's carrier out of r.
func dropCarrier(r *http.Request, svc config.Service) {
	switch svc.Auth {
	case "bearer", "basic":
		r.Header.Del("Authorization")
	case "header":
		r.Header.Del(svc.Header)
	case "query":
		q := r.URL.Query()
		q.Del(svc.QueryParam)
		r.URL.RawQuery = q.Encode()
	}
}

// unauthorized answers 401, with the challenge of the service's auth
// kind, and audits it (see refuse).
func (p *Proxy) unauthorized(w http.ResponseWriter, r *http.Request, name string, svc config.Service, why string) {
	switch svc.Auth {
	case "bearer":
		w.Header().Set("WWW-Authenticate", `Bearer realm="arca"`)
	case "basic":
		w.Header().Set("WWW-Authenticate", `Basic realm="arca"`)
	}
	p.refuse(w, r, name, svc, http.StatusUnauthorized, manifest.Denied, why)
}

// refuse answers a request that is not decided with status and audits it
// with code: naming the service, the method (when it is one the service
// allows: any other could be anything) and why; never what was sent. The
// JSON body's code is "unauthorized" for a 401, else code.
func (p *Proxy) refuse(w http.ResponseWriter, r *http.Request, name string, svc config.Service, status int, code manifest.Code, why string) {
	method := ""
	if slices.Contains(svc.Methods, r.Method) {
		method = r.Method
	}
	if err := p.o.Service.RefuseProxied(name, method, code, why); err != nil {
		w.Header().Del("WWW-Authenticate")
		writeError(w, http.StatusInternalServerError, string(manifest.OpError), err.Error())
		return
	}
	shown := string(code)
	if status == http.StatusUnauthorized {
		shown = "unauthorized"
	}
	writeError(w, status, shown, why)
}

// hopByHop are the headers that belong to one connection, never passed
// on, with those Connection names; the others taken out are routing
// (Host), framing (Content-Length, Expect) and the encoding upstream is
// asked for itself (Accept-Encoding).
func hopByHop() []string {
	return []string{"Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate",
		"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
		"Host", "Content-Length", "Expect", "Accept-Encoding"}
}

// outbound returns the headers of r that go on to ops.
func outbound(r *http.Request) http.Header {
	h := r.Header.Clone()
	for _, v := range h.Values("Connection") {
		for _, f := range strings.Split(v, ",") {
			if f = strings.TrimSpace(f); f != "" {
				h.Del(f)
			}
		}
	}
	for _, k := range hopByHop() {
		h.Del(k)
	}
	return h
}

// readBody reads r's body whole, at most manifest.MaxBody bytes: past it,
// ok is false.
func readBody(r *http.Request) (body []byte, ok bool, err error) {
	b, err := io.ReadAll(io.LimitReader(r.Body, manifest.MaxBody+1))
	if err != nil {
		return nil, false, err
	}
	return b, len(b) <= manifest.MaxBody, nil
}

// statusOf is the status that answers an ops error of code c.
func statusOf(c manifest.Code) int {
	switch c {
	case manifest.BadRequest:
		return http.StatusBadRequest
	case manifest.Denied, manifest.ApprovalRequired:
		return http.StatusForbidden
	case manifest.NotFound:
		return http.StatusNotFound
	case manifest.PDPUnreachable:
		return http.StatusServiceUnavailable
	case manifest.UpstreamFailed:
		return http.StatusBadGateway
	}
	return http.StatusInternalServerError
}

// writeOpsError answers an ops error: its code's status, its code and
// message (ops's messages never hold a value), and its details: the cause,
// or the approval an approval_required names, to wait for and retry.
func writeOpsError(w http.ResponseWriter, err error) {
	c := ops.CodeOf(err)
	if errors.Is(err, ops.ErrAudit) {
		c = manifest.OpError
	}
	d := &details{Cause: ops.CauseOf(err)}
	if a := ops.ApprovalOf(err); a != nil {
		d.Approval = &approvalDetails{ID: a.ID, Summary: a.Summary, Fingerprint: a.Fingerprint, ExpiresAt: ops.Time{Time: a.ExpiresAt}}
	}
	writeErrorDetails(w, statusOf(c), string(c), err.Error(), d)
}

// writeError answers status with {"error":{"code","message"}}.
func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeErrorDetails(w, status, code, msg, nil)
}

// details are an error's details, as serve's error responses carry them.
type details struct {
	Cause    string           `json:"cause,omitempty"`
	Approval *approvalDetails `json:"approval,omitempty"`
}

// approvalDetails is details.approval of an approval_required.
type approvalDetails struct {
	ID          string   `json:"id"`
	Summary     string   `json:"summary"`
	Fingerprint string   `json:"fingerprint"`
	ExpiresAt   ops.Time `json:"expires_at"`
}

// writeErrorDetails is writeError with details, when d holds any.
func writeErrorDetails(w http.ResponseWriter, status int, code, msg string, d *details) {
	var body struct {
		Error struct {
			Code    string   `json:"code"`
			Message string   `json:"message"`
			Details *details `json:"details,omitempty"`
		} `json:"error"`
	}
	body.Error.Code, body.Error.Message = code, msg
	if d != nil && (d.Cause != "" || d.Approval != nil) {
		body.Error.Details = d
	}
	b, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// parseQuery parses a raw query as sent.
func parseQuery(raw string) (url.Values, error) {
	if raw == "" {
		return nil, nil
	}
	return url.ParseQuery(raw)
}

// discardLog is the server's error log: the proxy's events are its
// account, and stderr is the audit wire.
func discardLog() *log.Logger { return log.New(io.Discard, "", 0) }
