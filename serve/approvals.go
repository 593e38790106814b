package serve

import (
	"strings"

	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/pdp"
	"github.com/arca-secrets/arca/serve/approvalpage"
)

// startPage starts the approval page when [serve.approvals] is set, with
// the approver's token from its token file or $ARCA_APPROVER_TOKEN in
// environ. It returns the page's list URL ("" when none runs), for the
// start event.
func (s *session) startPage(environ []string) (string, error) {
	a := s.cfg.Serve.Approvals
	if a == nil {
		return "", nil
	}
	token, err := approvalpage.LoadToken(getenvOf(environ), a.TokenFile)
	if err != nil {
		return "", err
	}
	p, err := approvalpage.Start(approvalpage.Options{Listen: a.Listen, Token: token, Store: pageStore{svc: s.svc, approver: a.Approver}})
	if err != nil {
		return "", err
	}
	s.page = p
	return p.ListURL(), nil
}

// closePage stops the approval page, if one runs.
func (s *session) closePage() {
	if s.page != nil {
		_ = s.page.Close()
		s.page = nil
	}
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

// pageStore is the session's approvals as the page reads and decides
// them: a decision made there is recorded as approver's, via the page.
type pageStore struct {
	svc      *ops.Service
	approver string
}

func (p pageStore) Pending() []approvalpage.View {
	vs := p.svc.PendingApprovals()
	out := make([]approvalpage.View, len(vs))
	for i, v := range vs {
		out[i] = pageView(v)
	}
	return out
}

func (p pageStore) View(id string) (approvalpage.View, bool) {
	v, ok := p.svc.Approval(id)
	return pageView(v), ok
}

func (p pageStore) Decide(id string, d approvalpage.Decision) error {
	_, err := p.svc.DecideApproval(id, d.Grant, pdp.Scope{Uses: d.Scope.Uses, TTLS: d.Scope.TTLSeconds}, p.approver, ops.ViaPage)
	return err
}

func pageView(v ops.ApprovalView) approvalpage.View {
	return approvalpage.View{ID: v.ID, State: v.State, Summary: v.Summary, Reason: v.Reason, Fingerprint: v.Fingerprint, ExpiresAt: v.ExpiresAt}
}
