package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/serve/proxy"
)

// proxyResult is the result of proxy: the base URL of each service
// served, the token and when it expires; or, for stop, stopped.
type proxyResult struct {
	BaseURLs  map[string]string `json:"base_urls,omitempty"`
	Token     string            `json:"token,omitempty"`
	ExpiresAt *ops.Time         `json:"expires_at,omitempty"`
	Stopped   bool              `json:"stopped,omitempty"`
}

// Verdict is nil: proxy consults no PDP (each request through it does).
func (proxyResult) Verdict() *audit.Policy { return nil }

// proxyOp answers the proxy op: it opens the session's proxy for the
// services named (on the listener already open, if any, with a fresh
// token for them and those it served), or stops it. Audited by ops with
// a message that names the services, never the token.
func (s *session) proxyOp(ctx context.Context, spec manifest.OpSpec, id []byte, req ops.Request) {
	var res proxyResult
	err := s.svc.Session(ctx, spec, req, func() (string, error) {
		var msg string
		var err error
		res, msg, err = s.runProxy(&req)
		return msg, err
	})
	s.answer(id, res, err)
}

// runProxy does what req asks of the proxy, and says so in a message.
func (s *session) runProxy(req *ops.Request) (proxyResult, string, error) {
	stop, services := req.Sent()&manifest.FieldStop != 0, req.Sent()&manifest.FieldServices != 0
	switch {
	case stop && services:
		return proxyResult{}, "", ops.Errorf(manifest.BadRequest, "send services to open the proxy or stop to close it, not both")
	case stop && !req.Stop:
		return proxyResult{}, "", ops.Errorf(manifest.BadRequest, "stop is false: send services to open the proxy, or stop true to close it")
	case stop:
		msg := "no proxy was open"
		if s.proxy != nil {
			msg = "proxy stopped"
		}
		s.closeProxy()
		return proxyResult{Stopped: true}, msg, nil
	case !services:
		return proxyResult{}, "", ops.Errorf(manifest.BadRequest, "services is required (or stop true)")
	}
	names, err := s.proxyServices(req.Services)
	if err != nil {
		return proxyResult{}, "", err
	}
	if req.Env != "" {
		// Every request through the proxy would fail on it: say so now.
		if _, err := s.cfg.ResolveEnv("", req.Env, s.ctxEnv); err != nil {
			return proxyResult{}, "", err
		}
	}
	g := proxy.Grant{Services: names, Env: req.Env, Actor: req.Actor}
	if s.proxy == nil {
		p, err := proxy.Start(proxy.Options{Service: s.svc, Services: s.cfg.Services, Scrub: s.scrubs.set}, g)
		if err != nil {
			return proxyResult{}, "", ops.Errorf(manifest.OpError, "%s", err.Error())
		}
		s.proxy = p
	} else if err := s.proxy.Issue(g); err != nil {
		return proxyResult{}, "", ops.Errorf(manifest.OpError, "%s", err.Error())
	}
	urls := s.proxy.BaseURLs()
	res := proxyResult{BaseURLs: urls, Token: s.proxy.Token(), ExpiresAt: &ops.Time{Time: s.proxy.ExpiresAt()}}
	served := slices.Sorted(maps.Keys(urls))
	return res, fmt.Sprintf("proxy for %s, a new token issued", strings.Join(served, ", ")), nil
}

// proxyServices decodes services, a JSON array of configured service
// names, each once.
func (s *session) proxyServices(raw []byte) ([]string, error) {
	var names []string
	if err := json.Unmarshal(raw, &names); err != nil || names == nil {
		return nil, ops.Errorf(manifest.BadRequest, "services must be an array of service names")
	}
	if len(names) == 0 {
		return nil, ops.Errorf(manifest.BadRequest, "services names none: name at least one service")
	}
	for _, n := range names {
		if _, ok := s.cfg.Services[n]; !ok {
			return nil, ops.Errorf(manifest.BadRequest, "unknown service %q (%s)", truncate(n, manifest.MaxName), configuredServices(s.cfg))
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// configuredServices says which services cfg configures.
func configuredServices(cfg *ops.Config) string {
	if len(cfg.Services) == 0 {
		return "no service is configured"
	}
	return "configured: " + strings.Join(slices.Sorted(maps.Keys(cfg.Services)), ", ")
}

// closeProxy closes the session's proxy, if it has one open, once the
// requests through it have returned and written their events. serve
// calls it on stop and before its stop event.
func (s *session) closeProxy() {
	if s.proxy != nil {
		s.proxy.Close()
		s.proxy = nil
	}
}
