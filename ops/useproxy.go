package ops

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/internal/scrub"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops/upstream"
	"github.com/arca-secrets/arca/pdp"
)

// ProxyRequest is one request through serve's proxy, as ops decides it:
// decided, audited and scrubbed as an http op is, its event's via
// "proxy". Path is as sent (percent-encoded), relative to the service's
// base URL; Header has the session's token taken out already.
type ProxyRequest struct {
	Service      string
	Method, Path string
	Query        url.Values
	Header       http.Header
	Body         []byte
	Env, Actor   string     // the env and actor the proxy was opened with
	Scrub        *scrub.Set // the values the session released (see Request.Scrub)
}

// Proxied is a request through the proxy that was let through: its
// credentials read, ready to be sent (Open) and, once its answer is
// passed on, audited (Finish). Its one event is written by Open when the
// exchange fails, else by Finish; a refusal's by BeginProxied.
type Proxied struct {
	s     *Service
	c     call
	creds []used
	up    *upstream.Service
	uc    upstream.Call
	start time.Time
}

// BeginProxied decides p as the http op would, with the use's via
// "proxy": an unknown service or a header that carries credentials is
// bad_request, a method or path the service does not allow denied, then
// the guardrails and the PDP on its credentials. A refusal's event is
// written through to the wire, and its error returned.
func (s *Service) BeginProxied(ctx context.Context, p ProxyRequest) (*Proxied, error) {
	op, _ := manifest.Op("http")
	req := Request{Op: op.Name, Service: p.Service, Method: p.Method, Path: p.Path, Env: p.Env, Actor: p.Actor, Scrub: p.Scrub}
	px := &Proxied{s: s, uc: upstream.Call{Method: p.Method, Path: p.Path, Query: p.Query, Header: p.Header, Body: p.Body}}
	target := func(c *call, req *Request) ([]useCred, *pdp.Use, error) {
		c.flush = true
		c.ev.Use.Service, c.ev.Use.Method, c.ev.Use.Path, c.ev.Use.BytesIn = req.Service, req.Method, auditPath(req.Path), int64(len(p.Body))
		if _, ok := s.cfg.Services[req.Service]; !ok {
			return nil, nil, Errorf(manifest.BadRequest, "unknown service %q", req.Service)
		}
		var err error
		if px.up, err = s.upstream(req.Service); err != nil {
			return nil, nil, err
		}
		clean, err := px.up.Check(px.uc)
		if err != nil {
			return nil, nil, refusal(err)
		}
		c.ev.Use.Path = clean
		creds, err := serviceCreds(req.Service, s.cfg.Services[req.Service])
		return creds, &pdp.Use{Kind: "service", Name: req.Service, Method: req.Method, Path: clean}, err
	}
	c, creds, err := s.beginUse(ctx, op, req, nil, viaProxy, target)
	if err != nil {
		return nil, err
	}
	c.flush = true
	px.c, px.creds = c, creds
	return px, nil
}

// Open sends the request upstream with its credential and returns the
// answer, its body unread (an *upstream.Body, cut at the service's cap).
// A failed exchange is audited here, upstream_failed with its cause.
func (px *Proxied) Open(ctx context.Context) (*http.Response, error) {
	px.start = time.Now()
	resp, err := px.up.Open(ctx, px.uc, credentialOf(px.creds))
	if err != nil {
		px.c.ev.Use.ElapsedMS = time.Since(px.start).Milliseconds()
		return nil, px.s.fail(&px.c, px.s.exchangeErr(&px.c, err))
	}
	px.c.ev.Use.Status = resp.StatusCode
	return resp, nil
}

// Scrub returns set (a fresh Set when nil) with the request's credentials
// registered: what its answer is scrubbed against.
func (px *Proxied) Scrub(set *scrub.Set) *scrub.Set { return scrubUse(set, px.creds) }

// ScrubName returns header name k of the answer scrubbed as an http op's
// header names are: against set (see Scrub), and against each credential
// of the request in any case (net/http changed the case of the name the
// upstream sent). It returns the placeholders written, 0 when k is
// unchanged.
func (px *Proxied) ScrubName(set *scrub.Set, k string) (string, int) {
	out, rds := set.Scrub([]byte(credCase(k, px.creds)))
	n := 0
	for _, rd := range rds {
		n += rd.Count
	}
	return string(out), n
}

// Finish writes the event of a request whose answer was passed on:
// bytesOut bytes of upstream body read, redactions placeholders written.
func (px *Proxied) Finish(bytesOut int64, redactions int) error {
	u := px.c.ev.Use
	u.BytesOut, u.Redactions, u.ElapsedMS = bytesOut, redactions, time.Since(px.start).Milliseconds()
	px.c.scrubUse()
	ev := px.c.ev
	ev.Event, ev.Outcome = px.c.op, audit.OK
	return px.s.writeFor(&px.c, ev)
}

// RefuseProxied writes the one event of a request through the proxy that
// is answered before it is decided: one that does not carry the session's
// token where its service's credential goes (code denied, answered 401),
// or whose body or query cannot be taken (bad_request). The event is via
// "proxy", names the service and the method (empty: left out) and says
// why in msg: never the token, nor anything the request sent. Only a
// failed write is returned.
func (s *Service) RefuseProxied(service, method string, code manifest.Code, msg string) error {
	c := call{op: "http", flush: true, ev: audit.Event{Op: "http",
		Use: &audit.Use{Service: service, Method: method, Via: viaProxy}}}
	if err := s.fail(&c, Errorf(code, "%s", msg)); errors.Is(err, ErrAudit) {
		return err
	}
	return nil
}
