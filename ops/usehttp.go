package ops

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops/config"
	"github.com/arca-secrets/arca/ops/upstream"
	"github.com/arca-secrets/arca/pdp"
)

// httpUse runs the http op: a request to a configured service, its
// credential injected, its response scrubbed when its event is written.
func (s *Service) httpUse(ctx context.Context, op manifest.OpSpec, req Request, held *heldEvent) (Result, error) {
	var up *upstream.Service
	var uc upstream.Call
	target := func(c *call, req *Request) ([]useCred, *pdp.Use, error) {
		c.ev.Use.Service, c.ev.Use.Method, c.ev.Use.Path = req.Service, req.Method, auditPath(req.Path)
		var err error
		up, uc, err = s.httpCall(req)
		if err != nil {
			return nil, nil, err
		}
		clean, err := up.Check(uc)
		if err != nil {
			return nil, nil, refusal(err)
		}
		c.ev.Use.Path = clean
		creds, err := serviceCreds(req.Service, s.cfg.Services[req.Service])
		return creds, &pdp.Use{Kind: "service", Name: req.Service, Method: req.Method, Path: clean}, err
	}
	c, creds, err := s.beginUse(ctx, op, req, held, viaOp, target)
	if err != nil {
		return nil, err
	}
	c.ev.Use.BytesIn = int64(len(uc.Body))
	start := time.Now()
	resp, err := up.Do(ctx, uc, credentialOf(creds))
	c.ev.Use.ElapsedMS = time.Since(start).Milliseconds()
	if err != nil {
		return nil, s.fail(&c, s.exchangeErr(&c, err))
	}
	c.ev.Use.Status, c.ev.Use.BytesOut = resp.Status, resp.BytesOut
	res := &HTTPResult{Service: req.Service, Status: resp.Status, raw: resp, use: c.ev.Use, creds: creds,
		ElapsedMS: c.ev.Use.ElapsedMS, Decision: c.decision()}
	if err := s.record(&c, c.ev.Version); err != nil {
		return nil, err
	}
	return res, nil
}

// httpCall builds the upstream call req asks for: the service it names
// (unknown: bad_request) and its method, path, query, headers and body,
// each of the shape the request schema gives.
func (s *Service) httpCall(req *Request) (*upstream.Service, upstream.Call, error) {
	if _, ok := s.cfg.Services[req.Service]; !ok {
		return nil, upstream.Call{}, unknownUse("service", req.Service, slices.Collect(maps.Keys(s.cfg.Services)))
	}
	uc := upstream.Call{Method: req.Method, Path: req.Path}
	var err error
	if uc.Query, err = decodeQuery(req.Query); err != nil {
		return nil, uc, err
	}
	if uc.Header, err = decodeHeaders(req.Headers); err != nil {
		return nil, uc, err
	}
	if uc.Body, err = decodeBody(req); err != nil {
		return nil, uc, err
	}
	up, err := s.upstream(req.Service)
	return up, uc, err
}

// upstream returns the client of the service named name, made once.
func (s *Service) upstream(name string) (*upstream.Service, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if up, ok := s.ups[name]; ok {
		return up, nil
	}
	up, err := upstream.New(name, s.cfg.Services[name])
	if err != nil {
		return nil, Errorf(manifest.OpError, "service %q: %v", name, err)
	}
	if s.ups == nil {
		s.ups = map[string]*upstream.Service{}
	}
	s.ups[name] = up
	return up, nil
}

// serviceCreds are the credentials a service injects: its credential,
// then for auth basic the user name.
func serviceCreds(name string, sc config.Service) ([]useCred, error) {
	r, err := parseCredRef("service", name, sc.Credential)
	if err != nil {
		return nil, err
	}
	creds := []useCred{{slot: "secret", ref: r}}
	if sc.Auth == "basic" {
		u, err := parseCredRef("service", name, sc.UsernameRef)
		if err != nil {
			return nil, err
		}
		creds = append(creds, useCred{slot: "user", ref: u})
	}
	return creds, nil
}

// credentialOf is what upstream injects, from the credentials read.
func credentialOf(creds []used) upstream.Credential {
	var uc upstream.Credential
	for _, c := range creds {
		switch c.slot {
		case "secret":
			uc.Secret = c.value
		case "user":
			uc.User = c.value
		}
	}
	return uc
}

// refusal maps upstream's refusal of a call to its wire code.
func refusal(err error) error {
	var r *upstream.Refusal
	if errors.As(err, &r) && r.Kind == upstream.Denied {
		return Errorf(manifest.Denied, "%s", r.Msg)
	}
	return Errorf(manifest.BadRequest, "%v", err)
}

// exchangeErr maps a failed exchange to upstream_failed with its cause;
// a use cut short because serve is stopping is op_error.
func (s *Service) exchangeErr(c *call, err error) error {
	var f *upstream.Failure
	if errors.As(err, &f) {
		c.ev.Use.Cause = f.Cause
		return upstreamFailed(f.Cause, "service %s: %s", c.ev.Use.Service, f.Msg)
	}
	return Errorf(manifest.OpError, "%v", err) // upstream names the service or its host
}

// decodeQuery decodes the query field: an object of strings or arrays
// of strings.
func decodeQuery(raw []byte) (url.Values, error) {
	if raw == nil {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, Errorf(manifest.BadRequest, "query must be an object of strings or arrays of strings")
	}
	q := url.Values{}
	for k, v := range m {
		var one string
		if json.Unmarshal(v, &one) == nil {
			q[k] = []string{one}
			continue
		}
		var many []string
		if err := json.Unmarshal(v, &many); err != nil || many == nil {
			return nil, Errorf(manifest.BadRequest, "query %q must be a string or an array of strings", truncName(k))
		}
		q[k] = many
	}
	return q, nil
}

// decodeHeaders decodes the headers field: an object of strings.
func decodeHeaders(raw []byte) (http.Header, error) {
	if raw == nil {
		return nil, nil
	}
	var m map[string]string
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, Errorf(manifest.BadRequest, "headers must be an object of strings")
	}
	h := http.Header{}
	for k, v := range m {
		h.Add(k, v)
	}
	return h, nil
}

// decodeBody returns the body sent, as text (body) or base64 (body_b64),
// not both.
func decodeBody(req *Request) ([]byte, error) {
	switch sent := req.Sent(); {
	case sent&manifest.FieldBody != 0 && sent&manifest.FieldBodyB64 != 0:
		return nil, Errorf(manifest.BadRequest, "send body or body_b64, not both")
	case sent&manifest.FieldBodyB64 != 0:
		b, err := base64.StdEncoding.DecodeString(req.BodyB64)
		if err != nil {
			return nil, Errorf(manifest.BadRequest, "body_b64 is not standard base64")
		}
		return b, nil
	case sent&manifest.FieldBody != 0:
		return []byte(req.Body), nil
	}
	return nil, nil
}

// truncName cuts a name a caller sent to 64 bytes for a message.
func truncName(s string) string {
	if len(s) > 64 {
		return fmt.Sprintf("%.64s…", s)
	}
	return s
}

// auditPath is the path a refused use asked for, as its event records it:
// without any query, cut to 1 KiB.
func auditPath(p string) string {
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	if len(p) > 1<<10 {
		p = p[:1<<10]
	}
	return p
}
