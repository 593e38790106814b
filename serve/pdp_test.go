package serve

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/ops"
)

// pdpFixture is a fixture whose [serve.pdp] runs script; the PDP child
// appends every request it reads to $HOME/requests, so a test can see
// whether, and with what, it was consulted. Each request arrives as one
// line of JSON.
func pdpFixture(t *testing.T, script, extra string) (*fixture, string) {
	t.Helper()
	home := t.TempDir()
	log := filepath.Join(home, "requests")
	exec := "cat >> " + log + "; " + script
	f := newFixtureConfig(t, "[serve.pdp]\nexec = "+quoteTOML(exec)+"\ntimeout_ms = 3000\n"+extra)
	return f, log
}

func quoteTOML(s string) string { b, _ := json.Marshal(s); return string(b) }

// consulted returns the requests the PDP read, one JSON object each.
func consulted(t *testing.T, log string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(log)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("PDP read %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

func TestPDPDenyTouchesNoVault(t *testing.T) {
	f, log := pdpFixture(t, `echo '{"allow":false,"reason":"no prod reads"}'`, "")
	in := lines(`{"op":"get","ref":"arca://billing/stripe","id":1,"actor":"agent:x","attestation":"ATT"}`)
	tr := f.session(t, sessionOpts{stdin: strings.NewReader(in), sent: []byte(in), environ: os.Environ()})
	checkReplies(t, tr, []want{{id: "1", code: "denied", msg: "denied by policy: no prod reads"}})
	if got := string(tr.responses(t)[0].Policy); got != `{"allow":false,"reason":"no prod reads"}` {
		t.Errorf("policy on the response = %s", got)
	}
	if f.spy.touched() != 0 {
		t.Errorf("a denied request reached the vault")
	}
	ev := tr.requestEvents(t)
	if len(ev) != 1 || ev[0].Event != "denied" || !strings.Contains(tr.stderr[1], `"policy":{"allow":false,"reason":"no prod reads"}`) {
		t.Errorf("denied event: %s", tr.stderr[1])
	}
	reqs := consulted(t, log)
	want := map[string]any{"actor": "agent:x", "attestation": "ATT", "op": "get", "env": "default", "ref": "billing/stripe",
		"supported_obligations": []any{"arca:approval", "arca:max_uses", "arca:no_reveal", "arca:ttl"}}
	if len(reqs) != 1 || !reflect.DeepEqual(reqs[0], want) {
		t.Fatalf("PDP requests = %v, want %v", reqs, want)
	}
}

func TestPDPAllowCarriesTheVerdict(t *testing.T) {
	f, log := pdpFixture(t, `echo '{"allow":true,"reason":"ok","obligations":["redact"]}'`, "")
	in := lines(`{"op":"put","ref":"arca://app/db","value":"v","id":1}`, `{"op":"get","ref":"arca://app/db","id":2}`,
		`{"op":"list","id":3}`, `{"op":"manifest","id":4}`, `{"op":"shutdown","id":5}`)
	tr := f.session(t, sessionOpts{stdin: strings.NewReader(in), sent: []byte(in), environ: os.Environ()})
	checkReplies(t, tr, []want{ok("1"), ok("2"), ok("3"), ok("4"), ok("5")})
	const verdict = `{"allow":true,"reason":"ok","obligations":["redact"]}`
	for i, r := range tr.responses(t) {
		if got, meta := string(r.Policy), i >= 3; (got == verdict) == meta || (meta && got != "") {
			t.Errorf("reply %d: policy %q (meta-ops never consult)", i+1, got)
		}
	}
	reqs := consulted(t, log)
	// The get and the list are decided at once (a run of reads), in
	// either order.
	if len(reqs) == 3 && reqs[1]["op"] == "list" {
		reqs[1], reqs[2] = reqs[2], reqs[1]
	}
	if len(reqs) != 3 || reqs[1]["op"] != "get" || reqs[2]["op"] != "list" || reqs[2]["ref"] != nil || reqs[0]["actor"] != nil {
		t.Errorf("PDP requests = %v; want put, get, list, list without ref, no actor claimed", reqs)
	}
	for _, l := range tr.stderr[1:4] {
		if !strings.Contains(l, `"policy":`+verdict) {
			t.Errorf("event without the verdict: %s", l)
		}
	}
}

func TestPDPUnreachableFailsClosed(t *testing.T) {
	f, _ := pdpFixture(t, `echo '{"allow":true}'; exit 3`, "")
	in := lines(`{"op":"put","ref":"arca://app/db","value":"v","id":1}`)
	tr := f.session(t, sessionOpts{stdin: strings.NewReader(in), sent: []byte(in), environ: os.Environ()})
	checkReplies(t, tr, []want{{id: "1", code: "pdp_unreachable", msg: "exited with status 3"}})
	if f.spy.touched() != 0 {
		t.Errorf("an unconsulted request reached the vault")
	}
}

func TestPDPAllowOnErrorRecordsADegradedVerdict(t *testing.T) {
	f, _ := pdpFixture(t, `echo garbage`, "allow_on_error = true\n")
	in := lines(`{"op":"put","ref":"arca://app/db","value":"v","id":1}`)
	tr := f.session(t, sessionOpts{stdin: strings.NewReader(in), sent: []byte(in), environ: os.Environ()})
	checkReplies(t, tr, []want{ok("1")})
	var p struct {
		Allow    bool   `json:"allow"`
		Reason   string `json:"reason"`
		Degraded bool   `json:"degraded"`
	}
	if err := json.Unmarshal(tr.responses(t)[0].Policy, &p); err != nil || !p.Allow || !p.Degraded || !strings.HasPrefix(p.Reason, "pdp unreachable: ") {
		t.Errorf("policy = %s (%v); want a degraded allow saying why", tr.responses(t)[0].Policy, err)
	}
	if !strings.Contains(tr.stderr[1], `"degraded":true`) {
		t.Errorf("event: %s", tr.stderr[1])
	}
}

func TestDoomedRequestsNeverSpawnThePDP(t *testing.T) {
	f, log := pdpFixture(t, `echo '{"allow":true}'`, `
[[guardrails.rule]]
ref = "billing/*"
reason = "billing is off limits"
`)
	in := lines(`{"op":"get","ref":"arca://../x","id":1}`, `{"op":"get","ref":"arca://billing/x","id":2}`,
		`{"op":"frob","id":3}`, `{"op":"get","id":4}`, `not json`, `{"op":"get","ref":"arca://a/b","env":"nope","id":6}`,
		`{"op":"manifest","id":7}`, `{"op":"shutdown","id":8}`)
	tr := f.session(t, sessionOpts{stdin: strings.NewReader(in), sent: []byte(in), environ: os.Environ()})
	checkReplies(t, tr, []want{bad("1", "invalid ref"), {id: "2", code: "denied", msg: "denied by guardrail: billing is off limits"},
		unknownOp("3", "unknown op"), bad("4", "ref"), bad("null", "JSON"), bad("6", "unknown env"), ok("7"), ok("8")})
	if reqs := consulted(t, log); len(reqs) != 0 {
		t.Errorf("the PDP was spawned for %v", reqs)
	}
	for i, r := range tr.responses(t) {
		if len(r.Policy) != 0 {
			t.Errorf("reply %d carries policy %s though no PDP was consulted", i+1, r.Policy)
		}
	}
}

// TestPDPNotAskedForAVaultThatCannotOpen: an env whose vault's location
// cannot be resolved (no HOME for the default path) is doomed before the
// PDP is asked.
func TestPDPNotAskedForAVaultThatCannotOpen(t *testing.T) {
	home := t.TempDir()
	log := filepath.Join(home, "requests")
	cfg, err := ops.ParseConfig([]byte(`
[envs.team]
vault = "team"
[vaults.team]
kind = "file"
[serve.pdp]
exec = `+quoteTOML("cat >> "+log+"; echo '{\"allow\":true}'")+`
`), "arca.toml", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{home: home, cfg: cfg, spy: &spy{}}
	in := lines(`{"op":"get","ref":"arca://app/db","env":"team","id":1}`)
	tr := f.session(t, sessionOpts{stdin: strings.NewReader(in), sent: []byte(in), environ: os.Environ()})
	checkReplies(t, tr, []want{{id: "1", code: "op_error", msg: "HOME is not set"}})
	if reqs := consulted(t, log); len(reqs) != 0 {
		t.Errorf("the PDP was asked about a doomed request: %v", reqs)
	}
}
