package serve

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/pdp/pdptest"
)

// opaExec is the one-line exec that makes OPA arca's PDP (docs/pdp.md).
func opaExec(t *testing.T) string {
	policy, err := filepath.Abs("testdata/opa/policy.rego")
	if err != nil {
		t.Fatal(err)
	}
	return pdptest.OPA(t) + " eval --stdin-input --format raw --data " + policy + " data.arca.decision"
}

// TestOPAAsThePDP drives serve with the real opa binary: an allowed get, a
// denied one, and garbage that never reaches it.
func TestOPAAsThePDP(t *testing.T) {
	f := newFixtureConfig(t, "[serve.pdp]\nexec = "+quoteTOML(opaExec(t))+"\ntimeout_ms = 20000\n")
	in := lines(`{"op":"put","ref":"arca://app/db","value":"v","id":0,"actor":"agent:ci"}`,
		`{"op":"get","ref":"arca://app/db","id":1,"actor":"agent:ci"}`,
		`{"op":"get","ref":"arca://app/db","id":2,"actor":"agent:other"}`,
		`{"op":"get","ref":"arca://app/db","id":3}`,
		`garbage: [`)
	tr := f.session(t, sessionOpts{stdin: strings.NewReader(in), sent: []byte(in), environ: os.Environ()})
	checkReplies(t, tr, []want{
		{id: "0", code: "denied", msg: "denied by policy: no rule allows this"},
		{id: "1", code: "not_found"},
		{id: "2", code: "denied", msg: "denied by policy: no rule allows this"},
		{id: "3", code: "denied", msg: "denied by policy: no rule allows this"},
		bad("null", "JSON"),
	})
	rs := tr.responses(t)
	if got := string(rs[1].Policy); got != `{"allow":true,"reason":"ci may read in default"}` {
		t.Errorf("allowed get: policy %s", got)
	}
	if len(f.spy.calls) != 1 || f.spy.calls["get"] != 1 {
		t.Errorf("vault calls %v; only the allowed get may reach it", f.spy.calls)
	}
}

// TestOPANeverAllowsGarbage: fed input that is not JSON (which OPA reads as
// YAML), the policy's default decides: no allow, or no verdict at all.
func TestOPANeverAllowsGarbage(t *testing.T) {
	for _, in := range []string{"garbage", "op: get\nactor: agent:x\n", "{not json", ""} {
		cmd := exec.Command("sh", "-c", opaExec(t))
		cmd.Stdin = strings.NewReader(in)
		out, err := cmd.Output()
		if err == nil && strings.Contains(string(out), `"allow":true`) {
			t.Errorf("input %q: opa allowed: %s", in, out)
		}
	}
}
