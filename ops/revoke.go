package ops

import (
	"strconv"
	"strings"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops/ref"
)

// RevokeResult is the result of revoke: how many open grants it closed.
type RevokeResult struct {
	Revoked int `json:"revoked"`
}

// Verdict is nil: revoke consults no PDP (it only narrows).
func (RevokeResult) Verdict() *audit.Policy { return nil }

// Revoke closes the grants req names (the revoke op): the grant
// req.Grant, every grant of req.Ref (in its pinned env, else in env when
// env is not "", else in every env), or all
// of them (req.All); exactly one of the three. Each grant closed gets its
// grant.close event; services lists the services of the uses they
// covered, whose proxy must stop.
func (s *Service) Revoke(req Request, env string) (res RevokeResult, services []string, msg string, err error) {
	sent := req.Sent()
	n := 0
	for _, f := range []manifest.FieldSet{manifest.FieldGrant, manifest.FieldRef, manifest.FieldAll} {
		if sent&f != 0 {
			n++
		}
	}
	var match func(grantKey, *grant) bool
	switch {
	case n != 1:
		return res, nil, "", Errorf(manifest.BadRequest, "revoke takes one of grant, ref and all")
	case sent&manifest.FieldGrant != 0:
		if !validID(req.Grant, "gr_") {
			return res, nil, "", Errorf(manifest.BadRequest, "grant must be \"gr_\" and 32 lowercase hex digits")
		}
		match = func(_ grantKey, g *grant) bool { return g.id == req.Grant }
	case sent&manifest.FieldRef != 0:
		r, err := ref.Parse(req.Ref)
		if err != nil {
			return res, nil, "", Errorf(manifest.BadRequest, "%s", err.Error())
		}
		if r.Env != "" {
			env = r.Env
		}
		if env != "" {
			if _, err := s.cfg.ResolveEnv(env, "", ""); err != nil {
				return res, nil, "", err
			}
		}
		match = func(k grantKey, _ *grant) bool { return k.ref == r.Path() && (env == "" || k.env == env) }
	case !req.All:
		return res, nil, "", Errorf(manifest.BadRequest, "all is false: send all true to revoke every grant")
	default:
		match = func(grantKey, *grant) bool { return true }
	}
	closed, rest := s.grants.closeMatching(s.now(), grantRevoked, match)
	for _, g := range append(closed, rest...) {
		if err := s.write(audit.Event{Event: "grant.close", Op: "revoke", Outcome: audit.OK, Actor: g.key.actor, Env: g.key.env, Ref: g.key.ref, Grant: g.id, Message: g.state}); err != nil {
			return res, nil, "", auditError(err)
		}
	}
	for _, g := range closed {
		if svc, ok := strings.CutPrefix(g.key.use, "http:"); ok {
			services = append(services, svc)
		}
	}
	return RevokeResult{Revoked: len(closed)}, services, revokedMessage(len(closed)), nil
}

// EndGrants closes every grant still open as serve stops, each with its
// grant.close event.
func (s *Service) EndGrants() error {
	closed, rest := s.grants.closeMatching(s.now(), grantEnded, func(grantKey, *grant) bool { return true })
	for _, g := range append(closed, rest...) {
		if err := s.write(audit.Event{Event: "grant.close", Outcome: audit.OK, Actor: g.key.actor, Env: g.key.env, Ref: g.key.ref, Grant: g.id, Message: g.state}); err != nil {
			return auditError(err)
		}
	}
	return nil
}

// revokedMessage says how many grants a revoke closed.
func revokedMessage(n int) string {
	if n == 1 {
		return "revoked 1 grant"
	}
	return "revoked " + strconv.Itoa(n) + " grants"
}
