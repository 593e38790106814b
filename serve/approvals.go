package serve

import (
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
	p, err := approvalpage.StartFor(s.svc, a, environ)
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
