package serve

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/pdp/pdptest"
)

// TestPersistentPDPThroughServe: with mode persistent, one child answers
// every decision of the session, reads the same requests a spawned PDP
// reads, and is gone once the session ends.
func TestPersistentPDPThroughServe(t *testing.T) {
	dir := t.TempDir()
	log, starts, pidFile := filepath.Join(dir, "requests"), filepath.Join(dir, "starts"), filepath.Join(dir, "pid")
	script := pdptest.Say + "echo x >> " + starts + "; echo $$ > " + pidFile + "; while read l; do echo \"$l\" >> " + log + "; " +
		`case $l in *'"actor":"agent:ci"'*'"op":"get"'*) say '{"allow":true,"reason":"ci may get"}';; ` +
		`*) say '{"allow":false,"reason":"only ci gets"}';; esac; done`
	f := newFixtureConfig(t, "[serve.pdp]\nexec = "+quoteTOML(script)+"\nmode = \"persistent\"\ntimeout_ms = 3000\n")
	in := lines(`{"op":"put","ref":"arca://app/db","value":"v","id":0,"actor":"agent:ci"}`,
		`{"op":"get","ref":"arca://app/db","id":1,"actor":"agent:ci"}`,
		`{"op":"get","ref":"arca://app/db","id":2,"actor":"agent:other"}`,
		`{"op":"manifest","id":3}`,
		`{"op":"get","ref":"arca://app/db","id":4,"actor":"agent:ci"}`)
	tr := f.session(t, sessionOpts{stdin: strings.NewReader(in), sent: []byte(in), environ: os.Environ()})
	checkReplies(t, tr, []want{
		{id: "0", code: "denied", msg: "denied by policy: only ci gets"},
		{id: "1", code: "not_found"},
		{id: "2", code: "denied", msg: "denied by policy: only ci gets"},
		{id: "3"},
		{id: "4", code: "not_found"},
	})
	if got := string(tr.responses(t)[1].Policy); got != `{"allow":true,"reason":"ci may get"}` {
		t.Errorf("allowed get: policy %s", got)
	}
	if b, _ := os.ReadFile(starts); string(b) != "x\n" {
		t.Errorf("children started: %q, want one", b)
	}
	reqs := consulted(t, log)
	if len(reqs) != 4 || reqs[0]["op"] != "put" || reqs[3]["actor"] != "agent:ci" || reqs[1]["ref"] != "app/db" {
		t.Errorf("the child read %v", reqs)
	}
	b, _ := os.ReadFile(pidFile)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("pid file %q", b)
	}
	wantGone(t, pid)
}

// TestPersistentStaleAllowThroughServe: a real arca serve with a
// persistent decider that writes its allow of the first request twice, the
// copy late: once the second request is in, before the deny it meant for
// that one (which it would write only when a third request came). The
// second request, a get, is pdp_unreachable naming the stale line, and so
// is its audit event, with no verdict; no value is served. The nonce
// reaches neither stdout nor the audit wire.
func TestPersistentStaleAllowThroughServe(t *testing.T) {
	b := buildArca(t)
	dir := t.TempDir()
	script := pdptest.Say + `read l; first=$l; say '{"allow":true,"reason":"ci may"}'; ` +
		`read l; second=$l; l=$first; say '{"allow":true,"reason":"ci may"}'; ` +
		`read l; l=$second; say '{"allow":false,"reason":"only ci"}'`
	config := writeConfig(t, dir, "[serve.pdp]\nexec = "+quoteTOML(script)+"\nmode = \"persistent\"\ntimeout_ms = 5000\n")
	const value = "stale-allow-7c41d0"
	in := lines(`{"op":"put","ref":"arca://app/db","value":"`+value+`","id":1,"actor":"agent:ci"}`,
		`{"op":"get","ref":"arca://app/db","id":2,"actor":"agent:other"}`)
	stdout, stderr, err := b.serve(t, in, "--config", config)
	if err != nil {
		t.Fatalf("arca serve: %v\nstderr:\n%s", err, short(string(stderr)))
	}
	tr := transcript{rawOut: stdout, rawErr: stderr, stdout: splitLines(t, "stdout", stdout), stderr: splitLines(t, "stderr", stderr)}
	checkWire(t, tr, []byte(in), false) // the schemas; the clock is real
	stale := "pdp unreachable: verdict echoes the nonce of an earlier request (a stale line)"
	checkReplies(t, tr, []want{ok("1"), {id: "2", code: "pdp_unreachable", msg: stale}})
	if rs := tr.responses(t); len(rs) == 2 && (rs[1].Policy != nil || rs[1].Result != nil) {
		t.Errorf("the get the decider meant to deny: policy %s, result %s", rs[1].Policy, short(string(rs[1].Result)))
	}
	evs := tr.requestEvents(t)
	if len(evs) != 2 {
		t.Fatalf("%d request events, want 2:\n%s", len(evs), short(string(stderr)))
	}
	if e := evs[1]; e.Op != "get" || e.Code != "pdp_unreachable" || e.Message != stale {
		t.Errorf("the refused get's event: op %q code %q message %q", e.Op, e.Code, e.Message)
	}
	for _, l := range tr.stderr {
		if strings.Contains(l, `"id":2`) && strings.Contains(l, `"policy"`) {
			t.Errorf("the refused get's event records a verdict: %s", l)
		}
	}
	if strings.Contains(string(stdout), value) {
		t.Errorf("the value was served:\n%s", short(string(stdout)))
	}
	if strings.Contains(string(stdout)+string(stderr), "nonce\"") {
		t.Errorf("a nonce reached stdout or the audit wire")
	}
}

// wantGone fails t unless process pid has been reaped. Serve closes the
// service before it returns, and the PDP's Close returns only once its
// child is reaped, so there is nothing to wait for: a child still there is
// a child serve left behind.
func wantGone(t *testing.T, pid int) {
	t.Helper()
	if stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		t.Fatalf("the PDP child %d outlived the session: %s", pid, stat)
	}
}

// startOPAServer runs `opa run --server` with testdata/opa/policy.rego on
// a free loopback port until the test ends, and returns its address.
func startOPAServer(t *testing.T) string {
	t.Helper()
	addr := pdptest.FreeAddr(t)
	policy, err := filepath.Abs("testdata/opa/policy.rego")
	if err != nil {
		t.Fatal(err)
	}
	pdptest.StartOPAServer(t, addr, policy)
	return addr
}

// TestOPAServerAsThePDP drives serve with a real `opa run --server` as its
// PDP over HTTP: the same policy and the same answers as through opa eval.
func TestOPAServerAsThePDP(t *testing.T) {
	addr := startOPAServer(t)
	f := newFixtureConfig(t, "[serve.pdp]\nurl = \"http://"+addr+"/v1/data/arca/decision\"\napi = \"opa\"\ntimeout_ms = 5000\n")
	in := lines(`{"op":"put","ref":"arca://app/db","value":"v","id":0,"actor":"agent:ci"}`,
		`{"op":"get","ref":"arca://app/db","id":1,"actor":"agent:ci"}`,
		`{"op":"get","ref":"arca://app/db","id":2,"actor":"agent:other"}`,
		`{"op":"get","ref":"arca://app/db","id":3}`)
	tr := f.session(t, sessionOpts{stdin: strings.NewReader(in), sent: []byte(in), environ: os.Environ()})
	checkReplies(t, tr, []want{
		{id: "0", code: "denied", msg: "denied by policy: no rule allows this"},
		{id: "1", code: "not_found"},
		{id: "2", code: "denied", msg: "denied by policy: no rule allows this"},
		{id: "3", code: "denied", msg: "denied by policy: no rule allows this"},
	})
	if got := string(tr.responses(t)[1].Policy); got != `{"allow":true,"reason":"ci may read in default"}` {
		t.Errorf("allowed get: policy %s", got)
	}
	if len(f.spy.calls) != 1 || f.spy.calls["get"] != 1 {
		t.Errorf("vault calls %v; only the allowed get may reach it", f.spy.calls)
	}
}

// TestOPAServerDown: a policy server that is not there fails closed, and
// with allow_on_error runs the op degraded.
func TestOPAServerDown(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	for _, extra := range []string{"", "allow_on_error = true\n"} {
		f := newFixtureConfig(t, "[serve.pdp]\nurl = \"http://"+addr+"/v1/data/arca/decision\"\napi = \"opa\"\n"+extra)
		in := lines(`{"op":"get","ref":"arca://app/db","id":1,"actor":"agent:ci"}`)
		tr := f.session(t, sessionOpts{stdin: strings.NewReader(in), sent: []byte(in), environ: os.Environ()})
		if extra == "" {
			checkReplies(t, tr, []want{{id: "1", code: "pdp_unreachable", msg: "pdp unreachable: cannot reach the opa server"}})
			if f.spy.touched() != 0 {
				t.Error("a request the PDP did not allow reached the vault")
			}
			continue
		}
		checkReplies(t, tr, []want{{id: "1", code: "not_found"}})
		if got := string(tr.responses(t)[0].Policy); !strings.Contains(got, `"degraded":true`) {
			t.Errorf("degraded policy %s", got)
		}
	}
}
