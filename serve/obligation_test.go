package serve

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// obligationFixture is a use fixture whose PDP allows everything with
// obligations, a service api and an action touch on tokRef, with the
// values stored. It returns the marker touch creates.
func obligationFixture(t *testing.T, u *upstreamSrv, obligations ...string) (*fixture, string) {
	t.Helper()
	marker := filepath.Join(t.TempDir(), "started")
	verdict, err := json.Marshal(map[string]any{"allow": true, "obligations": obligations})
	if err != nil {
		t.Fatal(err)
	}
	uses := u.service("api", "bearer", "") + fmt.Sprintf(`
[actions.touch]
argv = ["sh", "-c", 'touch "$0"', %q]
env = { TOKEN = %q }
`, marker, tokRef)
	f, _ := pdpFixture(t, "printf '%s' "+shellQuote(string(verdict)), uses)
	putValues(t, f)
	return f, marker
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// byID returns the response whose id is id.
func byID(t *testing.T, tr transcript, id string) response {
	t.Helper()
	for _, r := range tr.responses(t) {
		if string(r.ID) == id {
			return r
		}
	}
	t.Fatalf("no response with id %s", id)
	return response{}
}

// TestObligationNoReveal: arca:no_reveal lets the uses of a ref run and
// denies its get, with the verdict on the response and the event.
func TestObligationNoReveal(t *testing.T) {
	u := newUpstream(t, nil)
	f, marker := obligationFixture(t, u, "arca:no_reveal", "log-access")
	in := lines(
		`{"id":1,"op":"get","ref":"`+relRef+`"}`,
		`{"id":2,"op":"http","service":"api","method":"GET","path":"/x"}`,
		`{"id":3,"op":"exec","action":"touch"}`,
	)
	tr := useSession(t, f, in)
	get := byID(t, tr, "1")
	if get.code() != "denied" || get.message() != "denied by policy: cannot reveal: arca:no_reveal" {
		t.Errorf("get: %s %q, want denied: cannot reveal", get.code(), get.message())
	}
	if got := string(get.Policy); got != `{"allow":false,"obligations":["arca:no_reveal","log-access"]}` {
		t.Errorf("get's policy = %s", got)
	}
	if strings.Contains(strings.Join(tr.stdout, "\n"), relValue) {
		t.Errorf("the value of a no_reveal ref reached stdout")
	}
	for _, id := range []string{"2", "3"} {
		if r := byID(t, tr, id); r.code() != "" {
			t.Errorf("use %s: %s %q, want it allowed", id, r.code(), r.message())
		}
	}
	if n := len(u.requests()); n != 1 {
		t.Errorf("the upstream saw %d requests, want 1", n)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the action did not run: %v", err)
	}
	events := strings.Join(tr.stderr, "\n")
	if !strings.Contains(events, `"message":"denied by policy: cannot reveal: arca:no_reveal","policy":{"allow":false,"obligations":["arca:no_reveal","log-access"]}`) {
		t.Errorf("no denied event with the verdict: %s", events)
	}
}

// TestObligationUnfulfilled: an arca: obligation this build does not
// enforce makes every verdict a deny, a use's too; the prefix is
// case-sensitive, and unprefixed obligations are recorded only.
func TestObligationUnfulfilled(t *testing.T) {
	u := newUpstream(t, nil)
	for _, ob := range []string{"arca:bogus", "arca:ttl=0", "arca:ttl=86401", "arca:max_uses=x", "arca:max_uses=10001", "arca:approval", "arca:no_reveal=1", "arca:"} {
		t.Run(ob, func(t *testing.T) {
			f, marker := obligationFixture(t, u, "log-access", ob)
			tr := useSession(t, f, lines(`{"id":1,"op":"get","ref":"`+relRef+`"}`, `{"id":3,"op":"exec","action":"touch"}`))
			msg := "denied by policy: cannot fulfil obligation " + fmt.Sprintf("%q", ob)
			checkReplies(t, tr, []want{{id: "1", code: "denied", msg: msg}, {id: "3", code: "denied", msg: msg}})
			if _, err := os.Stat(marker); !os.IsNotExist(err) {
				t.Errorf("the action ran under an obligation arca cannot fulfil")
			}
			if strings.Contains(strings.Join(tr.stdout, "\n"), relValue) {
				t.Errorf("the value reached stdout")
			}
		})
	}
	t.Run("unprefixed", func(t *testing.T) {
		f, _ := obligationFixture(t, u, "ARCA:no_reveal", "log-access", "arca-ttl=5")
		in := lines(`{"id":1,"op":"get","ref":"` + relRef + `"}`)
		environ := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + f.home}
		tr := f.session(t, sessionOpts{stdin: strings.NewReader(in), sent: []byte(in), environ: environ})
		checkReplies(t, tr, []want{ok("1")})
		if got := string(byID(t, tr, "1").Policy); got != `{"allow":true,"obligations":["ARCA:no_reveal","log-access","arca-ttl=5"]}` {
			t.Errorf("policy = %s", got)
		}
	})
}

// TestObligationHostile: an obligation is untrusted text; the denial
// quotes it, cut to 128 bytes, and no control byte reaches the response
// or the event raw.
func TestObligationHostile(t *testing.T) {
	u := newUpstream(t, nil)
	ob := "arca:\x1b]0;owned\x07\r\n" + strings.Repeat("é", 100) + "TAIL"
	f, _ := obligationFixture(t, u, ob)
	tr := useSession(t, f, lines(`{"id":1,"op":"get","ref":"`+relRef+`"}`))
	r := byID(t, tr, "1")
	want := `denied by policy: cannot fulfil obligation "arca:\x1b]0;owned\a\r\n` + strings.Repeat("é", 55) + `"…` // 17 bytes, 55 é, and half an é cut
	if r.code() != "denied" || r.message() != want {
		t.Errorf("message = %q, want %q", r.message(), want)
	}
	for _, l := range append(tr.stdout, tr.stderr...) {
		if strings.ContainsAny(l, "\x1b\x07\r") {
			t.Errorf("a control byte reached the wire raw: %q", l)
		}
	}
	var msgs []string
	for _, e := range tr.requestEvents(t) {
		msgs = append(msgs, e.Message)
	}
	if len(msgs) != 1 || msgs[0] != want {
		t.Errorf("event messages = %q, want %q", msgs, want)
	}
}

// TestObligationNoRevealProxy: a request through the proxy is a use, so
// arca:no_reveal lets it carry the credential while a get of the same
// ref is denied.
func TestObligationNoRevealProxy(t *testing.T) {
	u := proxyUpstream(t, nil, nil)
	toml := u.serviceTOML("echo", `credential = "arca://t/cred"
auth = "bearer"
paths = ["/echo/*"]`)
	f, _ := pdpFixture(t, `echo '{"allow":true,"obligations":["arca:no_reveal"]}'`, toml)
	l := f.live(t)
	putCanary(t, l)
	o := l.openProxy(t, `"p"`, "echo")
	status, body, _ := call(t, "GET", o.BaseURLs["echo"]+"/echo/hello", bearer(o.Token), "")
	if status != 200 || strings.Contains(body, proxyCanary) {
		t.Errorf("proxied GET under no_reveal: %d, want 200 and a scrubbed body", status)
	}
	if got := u.requests(); len(got) != 1 || !slices.Equal(got[0].Header["Authorization"], []string{"Bearer " + proxyCanary}) {
		t.Errorf("the upstream did not receive the credential once") // the positive control
	}
	if r := l.ask(t, `{"id":"g","op":"get","ref":"arca://t/cred"}`); r.code() != "denied" || r.message() != "denied by policy: cannot reveal: arca:no_reveal" {
		t.Errorf("get under no_reveal: %s %q", r.code(), r.message())
	}
	l.end()
}

// TestObligationGrantUses: under arca:max_uses=1 an http and an exec
// using the same credential each open a grant of their own (the use is
// part of the key), their events carry it, and the second of each is
// denied with details.cause grant_exhausted on the wire.
func TestObligationGrantUses(t *testing.T) {
	u := newUpstream(t, nil)
	f, marker := obligationFixture(t, u, "arca:max_uses=1")
	scrub := `{"id":"s","op":"scrub","text":"-"}` // makes the next line wait its turn
	call := `{"id":%d,"op":"http","service":"api","method":"GET","path":"/x"}`
	tr := useSession(t, f, lines(fmt.Sprintf(call, 1), scrub,
		`{"id":2,"op":"exec","action":"touch"}`, scrub,
		fmt.Sprintf(call, 3), scrub,
		`{"id":4,"op":"exec","action":"touch"}`))
	checkReplies(t, tr, []want{ok("1"), ok(`"s"`), ok("2"), ok(`"s"`),
		{id: "3", code: "denied", msg: "denied: grant exhausted"}, ok(`"s"`), {id: "4", code: "denied", msg: "denied: grant exhausted"}})
	for _, i := range []int{4, 6} {
		if c := causeOf(t, tr, i); c != "grant_exhausted" {
			t.Errorf("reply %d: cause %q, want grant_exhausted", i+1, c)
		}
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the first exec did not run: %v", err) // the positive control
	}
	grants := map[string]string{} // by op: the grant its events carry
	opened := 0
	for _, line := range tr.stderr {
		var e struct{ Event, Op, Grant string }
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		if e.Op != "http" && e.Op != "exec" {
			continue
		}
		if e.Grant == "" || (grants[e.Op] != "" && grants[e.Op] != e.Grant) {
			t.Errorf("%s event %s: grant %q, want the op's one grant (%q)", e.Op, e.Event, e.Grant, grants[e.Op])
		}
		grants[e.Op] = e.Grant
		if e.Event == "grant.open" {
			opened++
		}
	}
	if opened != 2 || grants["http"] == "" || grants["http"] == grants["exec"] {
		t.Errorf("http and exec grants %q, %d opened, want two", grants, opened)
	}
}
