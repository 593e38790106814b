package approvalpage

import (
	"strings"

	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/config"
	"github.com/arca-secrets/arca/pdp"
)

// StartFor starts the page of svc's approvals as a sets it, with the
// approver's token from its token file or $ARCA_APPROVER_TOKEN in environ
// (never an argument: the agent that asked must not hold it). A decision
// made on the page is recorded as a.Approver's, via the page. It is what
// every door that can be answered approval_required starts: serve and
// arca mcp.
func StartFor(svc *ops.Service, a *config.ApprovalsConfig, environ []string) (*Server, error) {
	return StartWithRequests(svc, a, environ, nil)
}

// StartWithRequests is StartFor of a page that also lists rq, the
// secret requests of the session, and takes their values (nil: none).
func StartWithRequests(svc *ops.Service, a *config.ApprovalsConfig, environ []string, rq Requests) (*Server, error) {
	token, err := LoadToken(getenvOf(environ), a.TokenFile)
	if err != nil {
		return nil, err
	}
	return Start(Options{Listen: a.Listen, Token: token, Store: serviceStore{svc: svc, approver: a.Approver}, Requests: rq})
}

// getenvOf looks names up in environ, as os.Getenv would in a process of
// that environment.
func getenvOf(environ []string) func(string) string {
	return func(name string) string {
		for i := len(environ) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(environ[i], name+"="); ok {
				return v
			}
		}
		return ""
	}
}

// serviceStore is a service's approvals as the page reads and decides
// them: a decision made there is recorded as approver's, via the page.
type serviceStore struct {
	svc      *ops.Service
	approver string
}

func (p serviceStore) Pending() []View {
	vs := p.svc.PendingApprovals()
	out := make([]View, len(vs))
	for i, v := range vs {
		out[i] = viewOf(v)
	}
	return out
}

func (p serviceStore) View(id string) (View, bool) {
	v, ok := p.svc.Approval(id)
	return viewOf(v), ok
}

func (p serviceStore) Decide(id string, d Decision) error {
	_, err := p.svc.DecideApproval(id, d.Grant, pdp.Scope{Uses: d.Scope.Uses, TTLS: d.Scope.TTLSeconds}, p.approver, ops.ViaPage)
	return err
}

func viewOf(v ops.ApprovalView) View {
	return View{ID: v.ID, State: v.State, Summary: v.Summary, Reason: v.Reason, Fingerprint: v.Fingerprint, ExpiresAt: v.ExpiresAt}
}
