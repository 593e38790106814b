package ops

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/pdp"
)

// humanPDP is the policy of an approval: a put is denied with
// arca:approval unless the request carries an approved approval (then
// allowed with the obligations it holds) or falls under an active grant;
// every other op is allowed. It keeps every request asked.
type humanPDP struct {
	mu          sync.Mutex
	obligations []string
	asked       []pdp.Request
}

func (p *humanPDP) Decide(_ context.Context, req pdp.Request) (pdp.Verdict, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, req)
	switch {
	case req.Op != "put":
		return pdp.Verdict{Allow: true}, nil
	case req.Grant != nil && req.Grant.State == "active":
		return pdp.Verdict{Allow: true, Reason: "granted"}, nil
	case req.Approval != nil && req.Approval.State == ApprovalApproved:
		return pdp.Verdict{Allow: true, Reason: "approved", Obligations: p.obligations}, nil
	}
	return pdp.Verdict{Reason: "prod writes need a human", Obligations: []string{manifest.ObligationApproval, "log"}}, nil
}

func (p *humanPDP) Close() error { return nil }

func (p *humanPDP) last() pdp.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.asked[len(p.asked)-1]
}

func (p *humanPDP) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.asked)
}

// approvalFixture is a fixture (config extra added) asking a humanPDP,
// its clock at *now.
func approvalFixture(t *testing.T, extra string) (*fixture, *humanPDP, *time.Time) {
	t.Helper()
	f := newFixture(t, "[serve.pdp]\nexec = \"true\"\ntimeout_ms = 1000\n"+extra)
	p := &humanPDP{}
	f.svc.decider = p
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f.svc.now = func() time.Time { return now }
	f.events.Reset()
	return f, p, &now
}

func putAs(f *fixture, ref, approval string) error {
	_, err := f.svc.Put(context.Background(), Request{Ref: ref, Value: secret("s3cret-value"), Actor: "agent:a", Approval: approval})
	return err
}

// mustAsk puts ref and wants approval_required; it returns the approval.
func mustAsk(t *testing.T, f *fixture, ref string) *ApprovalDetails {
	t.Helper()
	err := putAs(f, ref, "")
	a := ApprovalOf(err)
	if CodeOf(err) != manifest.ApprovalRequired || a == nil {
		t.Fatalf("put %s: %v, want approval_required", ref, err)
	}
	return a
}

func approve(f *fixture, id, decision, scope string) (ApprovalResult, error) {
	req := Request{Approval: id, Decision: decision, Approver: "human:ana"}
	if scope != "" {
		req.Scope = []byte(scope)
	}
	r, _, err := f.svc.Approve(req)
	return r, err
}

// TestApprovalRoundTrip: a deny with arca:approval is answered at once
// with an approval; an identical request shares it; the host's approve
// grants 2 uses; the retry is decided again by the PDP, which sees the
// approval, and opens a grant of 2 uses, so the next put needs no
// approval and the one after is exhausted; the approval opens no second
// grant.
func TestApprovalRoundTrip(t *testing.T) {
	f, p, now := approvalFixture(t, "")
	a := mustAsk(t, f, "arca://app/db")
	wantFP := fingerprint("agent:a", "put", "default", "app/db", "")
	if !validID(a.ID, "ap_") || a.Fingerprint != wantFP || !a.ExpiresAt.Equal(now.Add(15*time.Minute)) ||
		a.Summary != `"agent:a" asks to put app/db in env default` {
		t.Fatalf("approval %+v", a)
	}
	if b := mustAsk(t, f, "arca://app/db"); b.ID != a.ID {
		t.Errorf("an identical request while pending got %s, want the shared %s", b.ID, a.ID)
	}
	if n := strings.Count(f.events.String(), `"event":"approval.request"`); n != 1 {
		t.Errorf("%d approval.request events, want 1", n)
	}
	if r, _, err := f.svc.ApprovalState(Request{Approval: a.ID}); err != nil || r.State != ApprovalPending || r.ExpiresAt == nil {
		t.Fatalf("approval state: %+v %v", r, err)
	}
	r, err := approve(f, a.ID, "grant", `{"uses":2}`)
	if err != nil || r.State != ApprovalApproved || r.Approver != "human:ana" || r.Scope == nil || r.Scope.Uses != 2 {
		t.Fatalf("approve: %+v %v", r, err)
	}
	if err := putAs(f, "arca://app/db", a.ID); err != nil {
		t.Fatalf("retry with the approval: %v", err)
	}
	in := p.last().Approval
	if in == nil || in.ID != a.ID || in.State != ApprovalApproved || in.Approver != "human:ana" || in.Scope == nil || in.Scope.Uses != 2 {
		t.Fatalf("the PDP's input approval %+v", in)
	}
	if err := putAs(f, "arca://app/db", ""); err != nil {
		t.Fatalf("second put in scope: %v", err)
	}
	if g := p.last().Grant; g == nil || g.Uses != 1 || g.MaxUses != 2 || g.State != "active" {
		t.Fatalf("second put's grant %+v, want 1 of 2 uses", g)
	}
	if err := putAs(f, "arca://app/db", ""); CauseOf(err) != "grant_exhausted" {
		t.Fatalf("third put: %v, want grant_exhausted", err)
	}
	if err := putAs(f, "arca://app/db", a.ID); CauseOf(err) != "grant_exhausted" {
		t.Fatalf("the spent approval again: %v (cause %q), want grant_exhausted", err, CauseOf(err))
	}
	ev := f.events.String()
	for _, want := range []string{
		`"event":"approval.request","op":"put","outcome":"ok","actor":"agent:a","env":"default","ref":"app/db","message":"\"agent:a\" asks to put app/db in env default","approval":{"id":"` + a.ID + `","fingerprint":"` + wantFP + `"}`,
		`"code":"approval_required","message":"approval required: \"agent:a\" asks to put app/db in env default","policy":{"allow":false,"reason":"prod writes need a human","obligations":["arca:approval","log"]},"approval":{"id":"` + a.ID + `"}`,
		`"event":"approval.decide","op":"put","outcome":"ok","actor":"agent:a","env":"default","ref":"app/db","approval":{"id":"` + a.ID + `","fingerprint":"` + wantFP + `","decision":"grant","approver":"human:ana","via":"op","uses":2}`,
		`"event":"grant.open","op":"put"`,
		`"reason":"approved"},"grant":"gr_`,
	} {
		if !strings.Contains(ev, want) {
			t.Errorf("events lack %s:\n%s", want, ev)
		}
	}
	if strings.Contains(ev, "s3cret-value") {
		t.Error("a value reached the audit")
	}
}

// TestApprovalRefusals: a retry with an approval of the wrong shape is
// bad_request, one this session does not know or one for another request
// is denied (the PDP not asked); a denied approval stays denied; an
// expired one is denied and its expiry is audited once.
func TestApprovalRefusals(t *testing.T) {
	f, p, now := approvalFixture(t, "")
	a := mustAsk(t, f, "arca://app/db")
	asked := p.count()
	for _, c := range []struct{ ref, id, code, cause string }{
		{"arca://app/db", "ap_nope", "bad_request", ""},
		{"arca://app/db", "AP_" + strings.Repeat("0", 32), "bad_request", ""},
		{"arca://app/db", "ap_" + strings.Repeat("0", 32), "denied", "approval_unknown"},
		{"arca://app/other", a.ID, "denied", "approval_mismatch"},
	} {
		err := putAs(f, c.ref, c.id)
		if string(CodeOf(err)) != c.code || CauseOf(err) != c.cause {
			t.Errorf("put %s with %q: %v (cause %q), want %s %s", c.ref, c.id, err, CauseOf(err), c.code, c.cause)
		}
	}
	if p.count() != asked {
		t.Errorf("the PDP was asked about refused approvals")
	}
	if _, err := approve(f, a.ID, "deny", ""); err != nil {
		t.Fatal(err)
	}
	if err := putAs(f, "arca://app/db", a.ID); CauseOf(err) != "approval_denied" {
		t.Fatalf("retry with a denied approval: %v", err)
	}
	b := mustAsk(t, f, "arca://app/db") // a new one: the denied one is not pending
	if b.ID == a.ID {
		t.Fatal("a request after a denial shares the denied approval")
	}
	*now = now.Add(manifest.ApprovalWait)
	if r, _, err := f.svc.ApprovalState(Request{Approval: b.ID}); err != nil || r.State != ApprovalExpired {
		t.Fatalf("after 15 minutes: %+v %v", r, err)
	}
	if err := putAs(f, "arca://app/db", b.ID); CauseOf(err) != "approval_expired" {
		t.Fatalf("retry with an expired approval: %v", err)
	}
	if _, err := approve(f, b.ID, "grant", ""); CodeOf(err) != manifest.BadRequest || !strings.Contains(err.Error(), "expired, not pending") {
		t.Fatalf("approving an expired approval: %v", err)
	}
	if n := strings.Count(f.events.String(), `"event":"approval.expire"`); n != 1 {
		t.Errorf("%d approval.expire events, want 1", n)
	}
	if _, _, err := f.svc.ApprovalState(Request{Approval: "ap_" + strings.Repeat("a", 32)}); CodeOf(err) != manifest.NotFound {
		t.Errorf("state of an unknown approval: %v, want not_found", err)
	}
}

// TestApprovalsFull: 20 approvals pending at once; the 21st distinct
// request is denied approvals_full, and once they expire there is room.
func TestApprovalsFull(t *testing.T) {
	f, _, now := approvalFixture(t, "")
	for i := range manifest.MaxPending {
		mustAsk(t, f, "arca://app/r"+string(rune('a'+i)))
	}
	if err := putAs(f, "arca://app/full", ""); CodeOf(err) != manifest.Denied || CauseOf(err) != "approvals_full" {
		t.Fatalf("21st pending: %v, want denied approvals_full", err)
	}
	mustAsk(t, f, "arca://app/ra") // an identical one still shares
	*now = now.Add(manifest.ApprovalWait)
	mustAsk(t, f, "arca://app/full")
}

// TestApproveChecks: approve refuses what it cannot record, naming it.
func TestApproveChecks(t *testing.T) {
	f, _, _ := approvalFixture(t, "")
	a := mustAsk(t, f, "arca://app/db")
	for _, c := range []struct{ decision, scope, approver, want string }{
		{"maybe", "", "h", "decision must be"},
		{"grant", `{"uses":0}`, "h", "scope.uses must be 1 to 10000"},
		{"grant", `{"uses":10001}`, "h", "scope.uses must be 1 to 10000"},
		{"grant", `{"ttl_s":86401}`, "h", "scope.ttl_s must be 1 to 86400"},
		{"grant", `{"uses":1.5}`, "h", "scope.uses must be 1 to 10000"},
		{"grant", `{"Uses":1}`, "h", "its keys exactly these"},
		{"grant", `{"uses":1,"uses":5000}`, "h", "its keys exactly these"},
		{"grant", `{"uses":{"n":1}}`, "h", "scope must be an object"},
		{"grant", `{"uses":1,"forever":true}`, "h", "scope must be an object"},
		{"grant", `[1]`, "h", "scope must be an object"},
		{"grant", `null`, "h", "scope must be an object"},
		{"deny", `{"uses":1}`, "h", "scope goes with decision \"grant\""},
		{"grant", "", "h\x1b[31m", "approver must be"},
	} {
		req := Request{Approval: a.ID, Decision: c.decision, Approver: c.approver}
		if c.scope != "" {
			req.Scope = []byte(c.scope)
		}
		_, _, err := f.svc.Approve(req)
		if CodeOf(err) != manifest.BadRequest || !strings.Contains(err.Error(), c.want) {
			t.Errorf("approve %q %s: %v, want bad_request %q", c.decision, c.scope, err, c.want)
		}
	}
	if _, err := approve(f, "ap_"+strings.Repeat("1", 32), "grant", ""); CodeOf(err) != manifest.NotFound {
		t.Errorf("approve an unknown approval: %v", err)
	}
	if _, err := approve(f, a.ID, "grant", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := approve(f, a.ID, "deny", ""); CodeOf(err) != manifest.BadRequest || !strings.Contains(err.Error(), "approved, not pending") {
		t.Errorf("deciding twice: %v", err)
	}
}

// TestApprovalScope: an approval's grant is the narrower of its scope and
// the PDP's obligations in each bound; no scope is the rest of the
// session (a grant bounded by neither).
func TestApprovalScope(t *testing.T) {
	for _, c := range []struct {
		obligations []string
		scope       string
		uses        int
		ttl         bool
	}{
		{[]string{"arca:max_uses=10", "arca:ttl=600"}, `{"uses":3}`, 3, true},
		{[]string{"arca:max_uses=2"}, `{"uses":5,"ttl_s":60}`, 2, true},
		{nil, "", 0, false},
	} {
		f, p, _ := approvalFixture(t, "")
		p.obligations = c.obligations
		a := mustAsk(t, f, "arca://app/db")
		if _, err := approve(f, a.ID, "grant", c.scope); err != nil {
			t.Fatal(err)
		}
		if err := putAs(f, "arca://app/db", a.ID); err != nil {
			t.Fatal(err)
		}
		for range 12 {
			if err := putAs(f, "arca://app/db", ""); err != nil {
				if c.uses == 0 || CauseOf(err) != "grant_exhausted" {
					t.Errorf("%s: %v", c.scope, err)
				}
				break
			}
		}
		g := p.last().Grant
		if g == nil || g.MaxUses != c.uses || (g.ExpiresAt != "") != c.ttl {
			t.Errorf("scope %s under %q: grant %+v, want max_uses %d, ttl %v", c.scope, c.obligations, g, c.uses, c.ttl)
		}
	}
}

// TestRenewByApproval: with renew = "approval", the first allow opens a
// grant, and once it closes the next allow asking for one is answered
// approval_required; approved, the retry opens one.
func TestRenewByApproval(t *testing.T) {
	f, _, _ := approvalFixture(t, "[serve.grants]\nrenew = \"approval\"\n")
	f.svc.decider = &obligingPDP{obligations: []string{"arca:max_uses=1"}}
	ctx := context.Background()
	get := func(approval string) error {
		_, err := f.svc.Get(ctx, Request{Ref: "arca://app/db", Actor: "agent:a", Approval: approval})
		return err
	}
	if _, err := f.svc.Put(ctx, Request{Ref: "arca://app/db", Value: secret("v")}); err != nil {
		t.Fatal(err)
	}
	if err := get(""); err != nil {
		t.Fatalf("first get: %v", err)
	}
	if err := get(""); CauseOf(err) != "grant_exhausted" {
		t.Fatalf("second get: %v", err)
	}
	err := get("")
	a := ApprovalOf(err)
	if CodeOf(err) != manifest.ApprovalRequired || a == nil || !strings.Contains(err.Error(), `"agent:a" asks to get app/db`) {
		t.Fatalf("renewal without an approval: %v", err)
	}
	if _, err := approve(f, a.ID, "grant", `{"uses":1}`); err != nil {
		t.Fatal(err)
	}
	if err := get(a.ID); err != nil {
		t.Fatalf("renewal with the approval: %v", err)
	}
}

// TestRevoke: revoke closes grants by id, by ref or all, counting those
// it closed; the PDP then sees them revoked; it takes exactly one of the
// three.
func TestRevoke(t *testing.T) {
	f, p, _ := grantFixture(t, "arca:max_uses=5")
	for _, ref := range []string{"arca://app/db", "arca://app/other"} {
		for _, actor := range []string{"agent:a", "agent:b"} {
			if _, err := getAs(f, actor, ref); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := getAs(f, "agent:a", "arca://app/db"); err != nil {
		t.Fatal(err)
	}
	id := p.last(t).ID
	revoke := func(req Request) (int, error) {
		r, _, _, err := f.svc.Revoke(req, "")
		return r.Revoked, err
	}
	for _, c := range []struct {
		req  Request
		want int
	}{
		{Request{Grant: id}, 1},
		{Request{Grant: id}, 0},
		{Request{Ref: "arca://app/other"}, 2},
		{Request{All: true}, 1},
		{Request{All: true}, 0},
	} {
		if n, err := revoke(c.req); err != nil || n != c.want {
			t.Errorf("revoke %+v: %d, %v; want %d", c.req, n, err, c.want)
		}
	}
	if _, err := getAs(f, "agent:a", "arca://app/db"); err != nil {
		t.Fatal(err)
	}
	if g := p.asked[len(p.asked)-1].Grant; g == nil || g.ID != id || g.State != "revoked" {
		t.Errorf("after revoke the PDP sees %+v, want %s revoked", g, id)
	}
	if n := strings.Count(f.events.String(), `"message":"revoked"`); n != 4 {
		t.Errorf("%d grant.close revoked events, want 4", n)
	}
	for _, req := range []Request{{}, {Grant: id, All: true}, {Grant: "gr_x"}} {
		if _, err := revoke(req); CodeOf(err) != manifest.BadRequest {
			t.Errorf("revoke %+v: %v, want bad_request", req, err)
		}
	}
	var r Request
	all, _ := manifest.RequestField("all")
	r.SetBool(all, false)
	if _, err := revoke(r); CodeOf(err) != manifest.BadRequest || !strings.Contains(err.Error(), "all is false") {
		t.Errorf("revoke all false: %v", err)
	}
}

// TestApprovalGrantRevoked: a retry with an approval whose grant was
// revoked is denied grant_revoked, its verdict recorded as the deny it
// became; revoking a grant already spent closes it as exhausted, audited
// and not counted.
func TestApprovalGrantRevoked(t *testing.T) {
	f, _, _ := approvalFixture(t, "")
	a := mustAsk(t, f, "arca://app/db")
	if _, err := approve(f, a.ID, "grant", `{"uses":1}`); err != nil {
		t.Fatal(err)
	}
	if err := putAs(f, "arca://app/db", a.ID); err != nil {
		t.Fatal(err)
	}
	if r, _, _, err := f.svc.Revoke(Request{All: true}, ""); err != nil || r.Revoked != 0 {
		t.Fatalf("revoking a spent grant: %+v %v, want 0 revoked", r, err)
	}
	if !strings.Contains(f.events.String(), `"event":"grant.close","op":"revoke","outcome":"ok","actor":"agent:a","env":"default","ref":"app/db","message":"exhausted"`) {
		t.Errorf("no grant.close exhausted for the spent grant revoke closed:\n%s", f.events.String())
	}
	b := mustAsk(t, f, "arca://app/db")
	if _, err := approve(f, b.ID, "grant", `{"uses":5}`); err != nil {
		t.Fatal(err)
	}
	if err := putAs(f, "arca://app/db", b.ID); err != nil {
		t.Fatal(err)
	}
	if r, _, _, err := f.svc.Revoke(Request{Ref: "arca://app/db"}, ""); err != nil || r.Revoked != 1 {
		t.Fatalf("revoke: %+v %v", r, err)
	}
	f.events.Reset()
	err := putAs(f, "arca://app/db", b.ID)
	if CodeOf(err) != manifest.Denied || CauseOf(err) != "grant_revoked" {
		t.Fatalf("retry after revoke: %v (cause %q)", err, CauseOf(err))
	}
	if p := PolicyOf(err); p == nil || p.Allow {
		t.Errorf("the verdict on the refusal: %+v, want the deny it became", p)
	}
	if ev := f.events.String(); !strings.Contains(ev, `"policy":{"allow":false,"reason":"approved"}`) {
		t.Errorf("the event records %s", ev)
	}
}
