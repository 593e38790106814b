package serve

import (
	"context"
	"slices"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
)

// approvalPage is the page a human decides this session's approvals on,
// when [serve.approvals] listen is set (see approvals.go).
type approvalPage interface {
	URL(id string) string
	Close() error
}

// grantOp answers revoke, approve and approval from the session's grants
// and approvals (ops holds them), audited by ops with a message that
// names the approval or the count, never a value. A revoke that closed a
// grant of a service the session's proxy serves stops the proxy.
func (s *session) grantOp(ctx context.Context, spec manifest.OpSpec, id []byte, req ops.Request) {
	var res ops.Result
	err := s.svc.Session(ctx, spec, req, func() (string, error) {
		switch spec.Name {
		case "revoke":
			r, services, msg, err := s.svc.Revoke(req, req.Env)
			if err == nil && s.proxy != nil && s.proxyServes(services) {
				s.closeProxy()
				msg += "; the proxy stopped"
			}
			res = r
			return msg, err
		case "approve":
			r, msg, err := s.svc.Approve(req)
			res = r
			return msg, err
		default:
			r, msg, err := s.svc.ApprovalState(req)
			res = r
			return msg, err
		}
	})
	s.answer(id, res, err)
}

// proxyServes reports whether the session's proxy serves any of services.
func (s *session) proxyServes(services []string) bool {
	urls := s.proxy.BaseURLs()
	return slices.ContainsFunc(services, func(n string) bool { _, ok := urls[n]; return ok })
}
