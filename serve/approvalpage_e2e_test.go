package serve

import (
	"strings"
	"testing"

	"github.com/arca-secrets/arca/serve/approvalpage/pagetest"
)

// TestApprovalPageInBrowser: with [serve.approvals] listen set, an
// approval_required names the page of its approval; a human opens it in
// a real browser, gives the token and approves one use; the retried
// request succeeds, and the decision is audited as the page's. The url
// alone approves nothing: without the token it is 401.
func TestApprovalPageInBrowser(t *testing.T) {
	const token = "approver-token-0123456789"
	f := newFixtureConfig(t, "[serve.pdp]\nexec = "+quoteTOML(humanPDPScript)+"\ntimeout_ms = 3000\n"+
		"[serve.approvals]\nlisten = \"127.0.0.1:0\"\napprover = \"human:ana\"\n")
	l := f.liveIn(t, []string{"ARCA_APPROVER_TOKEN=" + token, "PATH=/usr/bin:/bin"})
	put := `{"id":1,"op":"put","ref":"arca://app/db","value":"s3cret-value","actor":"agent:a"`
	r := l.ask(t, put+"}")
	url, _ := r.Error.Details.Approval["url"].(string)
	id, _ := r.Error.Details.Approval["id"].(string)
	if r.code() != "approval_required" || !strings.HasSuffix(url, "/approvals/"+id) {
		t.Fatalf("put: %s, details %v", r.code(), r.Error.Details)
	}
	if st, _, err := call(t, "GET", url, nil, ""); err != nil || st != 401 {
		t.Errorf("the url without the token: %d %v, want 401", st, err)
	}
	if st, _, err := call(t, "POST", url, map[string]string{"Content-Type": "application/json"}, `{"decision":"grant"}`); err != nil || st != 401 {
		t.Errorf("a decision without the token: %d %v, want 401", st, err)
	}
	ctx, consoleErrors := pagetest.Browser(t)
	if err := pagetest.Approve(t, ctx, url, token, "once"); err != nil {
		t.Fatalf("approving in the browser: %v", err)
	}
	if errs := consoleErrors(); len(errs) > 0 {
		t.Errorf("the console shows errors: %q", errs)
	}
	if r := l.ask(t, `{"id":2,"op":"approval","approval":"`+id+`"}`); r.field("state") != "approved" {
		t.Errorf("approval after the click: %s", r.Result)
	}
	if r := l.ask(t, put+`,"approval":"`+id+`"}`); !r.OK {
		t.Errorf("retry after the click: %s %s", r.code(), r.message())
	}
	tr := l.end()
	events := strings.Join(tr.stderr, "\n")
	if !strings.Contains(events, `"decision":"grant","approver":"human:ana","via":"page","uses":1}`) ||
		!strings.Contains(tr.stderr[0], "; approvals at http://127.0.0.1:") {
		t.Errorf("events lack the page's decision or the page's url at start:\n%s", events)
	}
	if strings.Contains(events, token) || strings.Contains(strings.Join(tr.stdout, "\n"), token) {
		t.Error("the approver's token reached the wire")
	}
}
