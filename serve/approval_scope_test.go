package serve

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
)

// getHumanPDPScript allows a put; a get only when the request carries an
// approved approval or falls under an active grant, else it denies it
// with arca:approval.
const getHumanPDPScript = `read -r l; case "$l" in *'"op":"put"'*) echo '{"allow":true}';; *'"state":"approved"'*|*'"state":"active"'*) echo '{"allow":true}';; *) echo '{"allow":false,"reason":"a human decides","obligations":["arca:approval"]}';; esac`

// approvedOnce starts a session on getHumanPDPScript, puts app/db, asks
// for a get of it and approves that get with scope; it returns the
// session and the approval's id.
func approvedOnce(t *testing.T, scope string) (*liveSession, string) {
	t.Helper()
	l := scriptPDP(t, getHumanPDPScript).live(t)
	if r := l.ask(t, `{"id":"p","op":"put","ref":"arca://app/db","value":"v"}`); !r.OK {
		t.Fatalf("put: %s %s", r.code(), r.message())
	}
	r := l.ask(t, `{"id":"g","op":"get","ref":"arca://app/db","actor":"agent:a"}`)
	id, _ := r.Error.Details.Approval["id"].(string)
	if r.code() != "approval_required" || id == "" {
		t.Fatalf("get: %s %s", r.code(), r.message())
	}
	if r := l.ask(t, `{"id":"a","op":"approve","approval":"`+id+`","decision":"grant","scope":`+scope+`,"approver":"human:ana"}`); r.field("state") != "approved" {
		t.Fatalf("approve %s: %s %s", scope, r.Result, r.message())
	}
	return l, id
}

// TestPipelinedRetriesOfAnApprovalGetNoMoreThanItsScope: a human approves
// one use; the caller sends ten retries with the approval in one write.
// An approval opens one grant no wider than its scope (SPEC §14), so one
// retry succeeds and the other nine are denied.
func TestPipelinedRetriesOfAnApprovalGetNoMoreThanItsScope(t *testing.T) {
	l, id := approvedOnce(t, `{"uses":1}`)
	const n = 10
	if succeeded := pipelinedOK(t, l, n, `{"id":%d,"op":"get","ref":"arca://app/db","actor":"agent:a","approval":"`+id+`"}`); succeeded != 1 {
		t.Errorf("%d of %d pipelined retries of an approval of one use succeeded, want 1", succeeded, n)
	}
	if opened := strings.Count(strings.Join(l.end().stderr, "\n"), `"event":"grant.open"`); opened != 1 {
		t.Errorf("the approval opened %d grants, want 1", opened)
	}
}

// TestApproveScopeKeysAreExact: the approve op's scope is an object of
// uses and ttl_s, "nothing else" (protocol.md), and a name given twice
// is bad_request: {"uses":1,"Uses":5000} approves nothing, where a
// reading that folds case and keeps the last would approve 5000 uses.
func TestApproveScopeKeysAreExact(t *testing.T) {
	l := scriptPDP(t, getHumanPDPScript).live(t)
	l.ask(t, `{"id":"p","op":"put","ref":"arca://app/db","value":"v"}`)
	r := l.ask(t, `{"id":"g","op":"get","ref":"arca://app/db","actor":"agent:a"}`)
	id, _ := r.Error.Details.Approval["id"].(string)
	if id == "" {
		t.Fatalf("get: %s %s", r.code(), r.message())
	}
	r = l.ask(t, `{"id":"a","op":"approve","approval":"`+id+`","decision":"grant","scope":{"uses":1,"Uses":5000},"approver":"human:ana"}`)
	if r.code() != "bad_request" {
		t.Errorf(`scope {"uses":1,"Uses":5000}: %s %s %s, want bad_request`, r.code(), r.message(), r.Result)
	}
}

// TestTwoApprovalsOfOneUseRunAUseOfTwoCredentials: pdp.md says a use two
// of whose credentials the policy asks a human about takes two
// approvals, the second retry finding the grant the first opened. With
// each approved for one use (the page's "once"), the first retry opens
// the first credential's grant without spending its use (the second
// credential still needs a human), and the retry with the second
// approval runs the action.
func TestTwoApprovalsOfOneUseRunAUseOfTwoCredentials(t *testing.T) {
	toml := "[serve.pdp]\nexec = " + quoteTOML(getHumanPDPScript) + "\ntimeout_ms = 20000\n" +
		"[actions.both]\nargv = [\"/bin/true\"]\nenv = { A = \"arca://app/a\", B = \"arca://app/b\" }\n"
	l := newFixtureConfig(t, toml).live(t)
	for _, ref := range []string{"app/a", "app/b"} {
		if r := l.ask(t, `{"id":"p","op":"put","ref":"arca://`+ref+`","value":"v"}`); !r.OK {
			t.Fatalf("put %s: %s %s", ref, r.code(), r.message())
		}
	}
	exec := `{"id":"x","op":"exec","action":"both","actor":"agent:a"`
	approval := ""
	for round := range 2 {
		line := exec + "}"
		if approval != "" {
			line = exec + `,"approval":"` + approval + `"}`
		}
		r := l.ask(t, line)
		id, _ := r.Error.Details.Approval["id"].(string)
		if r.code() != "approval_required" || id == "" {
			t.Fatalf("round %d: %s %s, want approval_required", round, r.code(), r.message())
		}
		if r := l.ask(t, `{"id":"a","op":"approve","approval":"`+id+`","decision":"grant","scope":{"uses":1},"approver":"human:ana"}`); r.field("state") != "approved" {
			t.Fatalf("approve: %s %s", r.Result, r.message())
		}
		approval = id
	}
	if r := l.ask(t, exec+`,"approval":"`+approval+`"}`); !r.OK {
		t.Errorf("the exec retried with the second approval: %s %s, want it run", r.code(), r.message())
	}
}

// TestRevokeRefusesAnEmptyRefOrAnUnknownEnv: protocol.md's errors table
// makes an empty or invalid ref, and an invalid or unconfigured env,
// bad_request: a typo in the env of a revoke is refused, never answered
// {"revoked":0} as though nothing were open.
func TestRevokeRefusesAnEmptyRefOrAnUnknownEnv(t *testing.T) {
	l := scriptPDP(t, `echo '{"allow":true}'`).live(t)
	for _, line := range []string{
		`{"id":1,"op":"revoke","ref":""}`,
		`{"id":2,"op":"revoke","ref":"arca://nope/app/db"}`,
		`{"id":3,"op":"revoke","ref":"arca://app/db","env":"nope"}`,
	} {
		if r := l.ask(t, line); r.code() != "bad_request" {
			t.Errorf("%s: %s %s %s, want bad_request", line, r.code(), r.message(), r.Result)
		}
	}
}

// TestPipelinedRequestsPastAGrantNeedAnApprovalAgain: with protocol.md's
// policy (allow an approved retry or a request under an active grant,
// else ask a human), a human approves two uses; the retry spends one,
// then ten gets go in one write. The grant has one use left: one get
// succeeds and the rest are denied: each was allowed on the grant as it
// stood when it was decided ("active"), and that grant is spent by the
// requests before it; such an allow is never taken as a plain allow.
func TestPipelinedRequestsPastAGrantNeedAnApprovalAgain(t *testing.T) {
	l, id := approvedOnce(t, `{"uses":2}`)
	if r := l.ask(t, `{"id":"r","op":"get","ref":"arca://app/db","actor":"agent:a","approval":"`+id+`"}`); !r.OK {
		t.Fatalf("retry: %s %s", r.code(), r.message())
	}
	const n = 10
	if succeeded := pipelinedOK(t, l, n, `{"id":%d,"op":"get","ref":"arca://app/db","actor":"agent:a"}`); succeeded != 1 {
		t.Errorf("%d of %d pipelined gets succeeded on a grant with one use left, want 1", succeeded, n)
	}
}

// TestPipelinedRequestsPastAGrantRenewByApproval: with [serve.grants]
// renew = "approval" only a human opens a key's second grant. A PDP
// allows a get under an active grant, and opens one of three uses
// otherwise; two gets spend two uses, then ten go in one write: one
// succeeds, and the rest, allowed on the grant they were shown active,
// are denied once it is spent.
func TestPipelinedRequestsPastAGrantRenewByApproval(t *testing.T) {
	script := `case "$(cat)" in *'"state":"active"'*) echo '{"allow":true}';; *) echo '{"allow":true,"obligations":["arca:max_uses=3"]}';; esac`
	l := newFixtureConfig(t, "[serve.grants]\nrenew = \"approval\"\n[serve.pdp]\nexec = "+quoteTOML(script)+"\ntimeout_ms = 20000\n").live(t)
	l.ask(t, `{"id":"p","op":"put","ref":"arca://app/db","value":"v"}`)
	for _, id := range []string{"g1", "g2"} {
		if r := l.ask(t, `{"id":"`+id+`","op":"get","ref":"arca://app/db"}`); !r.OK {
			t.Fatalf("%s: %s %s", id, r.code(), r.message())
		}
	}
	const n = 10
	if succeeded := pipelinedOK(t, l, n, `{"id":%d,"op":"get","ref":"arca://app/db"}`); succeeded != 1 {
		t.Errorf("%d of %d pipelined gets succeeded on a grant with one use left and renew = \"approval\", want 1", succeeded, n)
	}
}

// TestAnExecCountsOneUseOfACredentialItNamesTwice: a grant counts one
// use per request (pdp.md, Grants). An action whose env names one
// credential twice uses it once per exec: a grant of four uses runs it
// four times.
func TestAnExecCountsOneUseOfACredentialItNamesTwice(t *testing.T) {
	toml := "[serve.pdp]\nexec = " + quoteTOML(`cat >/dev/null; echo '{"allow":true,"obligations":["arca:max_uses=4"]}'`) + "\ntimeout_ms = 20000\n" +
		"[actions.twice]\nargv = [\"/bin/true\"]\nenv = { A = \"arca://app/a\", B = \"arca://app/a\" }\n"
	l := newFixtureConfig(t, toml).live(t)
	if r := l.ask(t, `{"id":"p","op":"put","ref":"arca://app/a","value":"v"}`); !r.OK {
		t.Fatalf("put: %s %s", r.code(), r.message())
	}
	for i := range 4 {
		if r := l.ask(t, fmt.Sprintf(`{"id":%d,"op":"exec","action":"twice"}`, i)); !r.OK {
			t.Errorf("exec %d of a grant of 4 uses: %s %s", i+1, r.code(), r.message())
		}
	}
}

// TestProxyAnswersApprovalRequiredAsARefusal: use.md's table of the
// proxy's refusals has no 500 but for an audit that could not be
// written. A proxied request the PDP denies with arca:approval is a
// refusal (403) naming the approval in its details, so the tool can
// tell it from a failure and learn which approval to wait for.
func TestProxyAnswersApprovalRequiredAsARefusal(t *testing.T) {
	u := newTestUpstream(t, nil)
	script := `case "$(cat)" in *'"via":"proxy"'*) echo '{"allow":false,"reason":"a human decides","obligations":["arca:approval"]}';; *) echo '{"allow":true}';; esac`
	toml := "[serve.pdp]\nexec = " + quoteTOML(script) + "\ntimeout_ms = 20000\n" +
		u.serviceTOML("echo", "credential = \"arca://t/cred\"\nauth = \"bearer\"\npaths = [\"/echo\"]")
	l := newFixtureConfig(t, toml).live(t)
	putCanary(t, l)
	o := l.openProxy(t, `"p"`, "echo")
	st, body, err := call(t, "GET", o.BaseURLs["echo"]+"/echo", bearer(o.Token), "")
	if err != nil {
		t.Fatal(err)
	}
	if st == 500 || !strings.Contains(body, `"approval":{"id":"ap_`) {
		t.Errorf("a proxied request that needs an approval: %d %s, want a refusal that names its approval", st, body)
	}
}

// pipelinedOK sends n request lines made from format (its one verb the
// line's number) in one write, and returns how many succeeded.
func pipelinedOK(t *testing.T, l *liveSession, n int, format string) int {
	t.Helper()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, format+"\n", i)
	}
	if _, err := io.WriteString(l.in, b.String()); err != nil {
		t.Fatal(err)
	}
	succeeded := 0
	for range n {
		var r response
		if err := json.Unmarshal([]byte(<-l.out), &r); err != nil {
			t.Fatal(err)
		}
		if r.OK {
			succeeded++
		}
	}
	return succeeded
}
