package serve

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// humanPDPScript denies a put of ns app with arca:approval unless the request
// carries an approved approval or falls under an active grant; it
// allows a proxied request with arca:max_uses=5, everything else
// without obligations.
const humanPDPScript = `read -r l; case "$l" in *'"op":"put","env":"default","ref":"app/'*) case "$l" in *'"state":"approved"'*|*'"state":"active"'*) echo '{"allow":true}';; *) echo '{"allow":false,"reason":"prod writes need a human","obligations":["arca:approval"]}';; esac;; *'"via":"proxy"'*) echo '{"allow":true,"obligations":["arca:max_uses=5"]}';; *) echo '{"allow":true}';; esac`

// TestApprovalOverTheWire: the approval round trip as a host drives it:
// a put answered approval_required at once, the approval reported
// pending, approved by the host's approve with a scope of one use, the
// retry allowed, the next put denied grant_exhausted; every line valid
// against the schemas, and the events in the audit.
func TestApprovalOverTheWire(t *testing.T) {
	f := newFixtureConfig(t, "[serve.pdp]\nexec = "+quoteTOML(humanPDPScript)+"\ntimeout_ms = 3000\n")
	l := f.live(t)
	put := `{"id":1,"op":"put","ref":"arca://app/db","value":"s3cret-value","actor":"agent:a"`
	r := l.ask(t, put+"}")
	if r.code() != "approval_required" {
		t.Fatalf("put: %s %s", r.code(), r.message())
	}
	ap := r.Error.Details.Approval
	id, _ := ap["id"].(string)
	if ap["summary"] != `"agent:a" asks to put app/db in env default` || ap["url"] != nil || len(id) != 35 {
		t.Fatalf("approval %v", ap)
	}
	if r := l.ask(t, put+"}"); r.code() != "approval_required" || r.Error.Details.Approval["id"] != id {
		t.Errorf("the same put again: %s %v", r.code(), r.Error)
	}
	if r := l.ask(t, `{"id":2,"op":"approval","approval":"`+id+`"}`); r.field("state") != "pending" {
		t.Errorf("approval: %s", r.Result)
	}
	if r := l.ask(t, `{"id":3,"op":"approve","approval":"`+id+`","decision":"grant","scope":{"uses":1},"approver":"human:ana"}`); r.field("state") != "approved" {
		t.Errorf("approve: %s %s", r.Result, r.message())
	}
	if r := l.ask(t, put+`,"approval":"`+id+`"}`); !r.OK {
		t.Errorf("retry: %s %s", r.code(), r.message())
	}
	if r := l.ask(t, put+"}"); r.cause() != "grant_exhausted" {
		t.Errorf("put past the scope: %s %s", r.code(), r.message())
	}
	if r := l.ask(t, `{"id":4,"op":"revoke","all":true}`); r.field("revoked") != 0.0 {
		t.Errorf("revoke: %s %s", r.Result, r.message())
	}
	if r := l.ask(t, `{"id":5,"op":"approve","approval":"`+id+`","decision":"deny","approver":"x"}`); r.code() != "bad_request" {
		t.Errorf("deciding twice: %s", r.code())
	}
	tr := l.end()
	events := strings.Join(tr.stderr, "\n")
	for _, want := range []string{`"event":"approval.request"`, `"event":"approval.decide"`, `"via":"op","uses":1}`, `"event":"grant.open"`,
		`"event":"grant.close","op":"put","outcome":"ok","actor":"agent:a","env":"default","ref":"app/db","message":"exhausted"`,
		`"event":"revoke","op":"revoke","outcome":"ok"`} {
		if !strings.Contains(events, want) {
			t.Errorf("events lack %s", want)
		}
	}
	if strings.Contains(events, "s3cret-value") {
		t.Error("a value reached the audit")
	}
}

// TestRevokeStopsProxy: revoking the grant a proxied request opened
// stops the proxy at once: its port refuses the next request; a grant
// still open when serve stops is closed as ended.
func TestRevokeStopsProxy(t *testing.T) {
	u := newTestUpstream(t, nil)
	toml := "[serve.pdp]\nexec = " + quoteTOML(humanPDPScript) + "\ntimeout_ms = 3000\n" +
		u.serviceTOML("echo", "credential = \"arca://t/cred\"\nauth = \"bearer\"\npaths = [\"/echo\"]")
	f := newFixtureConfig(t, toml)
	l := f.live(t)
	putCanary(t, l)
	if r := l.ask(t, `{"id":"g","op":"get","ref":"arca://t/cred","actor":"agent:a"}`); !r.OK {
		t.Fatal(r.message())
	}
	o := l.openProxy(t, `"p"`, "echo")
	if st, body, err := call(t, "GET", o.BaseURLs["echo"]+"/echo", bearer(o.Token), ""); err != nil || st != 200 {
		t.Fatalf("through the proxy: %d %s %v", st, body, err)
	}
	if r := l.ask(t, `{"id":"r","op":"revoke","ref":"arca://t/cred"}`); r.field("revoked") != 1.0 {
		t.Fatalf("revoke: %s %s", r.Result, r.message())
	}
	if resp, err := proxyClient().Get(o.BaseURLs["echo"] + "/echo"); err == nil {
		resp.Body.Close()
		t.Errorf("the proxy answered %d after its grant was revoked", resp.StatusCode)
	}
	if r := l.ask(t, `{"id":"r2","op":"revoke","grant":"gr_`+strings.Repeat("0", 32)+`"}`); r.field("revoked") != 0.0 {
		t.Errorf("revoke of an unknown grant: %s %s", r.Result, r.message())
	}
	o = l.openProxy(t, `"p2"`, "echo")
	if st, _, err := call(t, "GET", o.BaseURLs["echo"]+"/echo", nil, ""); err != nil || st == 200 {
		t.Errorf("a new proxy without its token: %d %v", st, err)
	}
	if st, _, err := call(t, "GET", o.BaseURLs["echo"]+"/echo", bearer(o.Token), ""); err != nil || st != 200 {
		t.Errorf("a new proxy with its token: %d %v", st, err)
	}
	tr := l.end()
	events := strings.Join(tr.stderr, "\n")
	if !strings.Contains(events, `"message":"revoked 1 grant; the proxy stopped"`) || !strings.Contains(events, `"message":"ended"`) {
		t.Errorf("events lack the revoke's message or a grant ended at stop:\n%s", events)
	}
}

// TestGrantUsesInRequestOrder: pipelined gets race for a grant's last
// uses, the first one's decision held back until every other was made:
// the grant's three uses still go to the first three asked, the fourth
// finds it spent, and the fifth opens a new one.
func TestGrantUsesInRequestOrder(t *testing.T) {
	dir := t.TempDir()
	release, decided := filepath.Join(dir, "release"), filepath.Join(dir, "decided")
	for _, p := range []string{release, decided} {
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The decision of the request attested "slow" waits on release; every
	// other says it was made on decided.
	script := fmt.Sprintf(`case "$(cat)" in *'"attestation":"slow"'*) cat %s >/dev/null;; *) echo x > %s;; esac; echo '{"allow":true,"obligations":["arca:max_uses=3"]}'`,
		quoteShell(release), quoteShell(decided))
	f := scriptPDP(t, script)
	const others = 5 // the put's decision and four gets'
	// Held open for reading and writing, decided never reads as ended
	// between two decisions' writes.
	d, err := os.OpenFile(decided, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	go func() {
		br := bufio.NewReader(d)
		for range others {
			if _, err := br.ReadString('\n'); err != nil {
				t.Error(err)
				return
			}
		}
		w, err := os.OpenFile(release, os.O_WRONLY, 0) // until the slow decision opens it
		if err != nil {
			t.Error(err)
			return
		}
		w.Close()
	}()
	in := lines(`{"id":0,"op":"put","ref":"arca://app/db","value":"v"}`,
		`{"id":1,"op":"get","ref":"arca://app/db","attestation":"slow"}`,
		`{"id":2,"op":"get","ref":"arca://app/db"}`, `{"id":3,"op":"get","ref":"arca://app/db"}`,
		`{"id":4,"op":"get","ref":"arca://app/db"}`, `{"id":5,"op":"get","ref":"arca://app/db"}`)
	tr := f.session(t, sessionOpts{stdin: strings.NewReader(in), sent: []byte(in), environ: os.Environ()})
	checkReplies(t, tr, []want{ok("0"), ok("1"), ok("2"), ok("3"), {id: "4", code: "denied", msg: "denied: grant exhausted"}, ok("5")})
}
