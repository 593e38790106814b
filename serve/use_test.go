package serve

// The http and exec uses (SPEC §13) through whole sessions, against real
// servers: an HTTPS upstream of its own CA (tls_ca), real children.

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arca-secrets/arca/ops/upstream/upstreamtest"

	"github.com/arca-secrets/arca/internal/scrub"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/opstest"
	"github.com/arca-secrets/arca/vault"
)

// The values the use tests store. tokValue holds characters JSON escapes
// (" / <), so that its JSON-escaped form differs from it.
const (
	tokRef      = "arca://svc/token"
	tokValue    = `TOKEN-canary-"q"/<x>-5b1e`
	userRef     = "arca://svc/user"
	userValue   = "alice-canary-user-7c0d"
	relRef      = "arca://app/released"
	relValue    = "RELEASED-canary-31f4"
	serveCanary = "SERVE-ENV-canary-9d2a"
)

// seen is one request an upstream received.
type seen struct {
	method, path, rawQuery string
	header                 http.Header
	body                   []byte
}

// upstreamSrv is an HTTPS server of its own CA that records every request
// it receives, then answers with handle (echo when nil).
type upstreamSrv struct {
	srv *httptest.Server
	ca  string // the PEM of its certificate, for tls_ca
	mu  sync.Mutex
	got []seen
}

func newUpstream(t *testing.T, handle http.HandlerFunc) *upstreamSrv {
	t.Helper()
	u := &upstreamSrv{}
	if handle == nil {
		handle = echo
	}
	u.srv, u.ca = upstreamtest.StartTLS(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.got = append(u.got, seen{r.Method, r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Clone(), body})
		u.mu.Unlock()
		handle(w, r)
	}))
	return u
}

// echo answers what it received: method, path, query and headers.
func echo(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"method": r.Method, "path": r.URL.EscapedPath(), "query": r.URL.RawQuery, "headers": r.Header})
}

// requests returns what the upstream received so far.
func (u *upstreamSrv) requests() []seen {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.got)
}

// service is the TOML of a service on u: credential tokRef, its auth,
// paths "/*", allow_private (u is loopback), u's CA; extra is appended.
func (u *upstreamSrv) service(name, auth, extra string) string {
	return fmt.Sprintf("[services.%s]\nbase_url = %q\ncredential = %q\nauth = %q\npaths = [\"/*\"]\nallow_private = true\ntls_ca = %q\n%s\n",
		name, u.srv.URL, tokRef, auth, u.ca, extra)
}

// putValues stores the use tests' values in f's vault, as another
// process would before the session.
func putValues(t *testing.T, f *fixture) {
	t.Helper()
	svc := f.ops.NewService(t, opstest.Options{Now: fixedClock})
	for _, kv := range [][2]string{{tokRef, tokValue}, {userRef, userValue}, {relRef, relValue}} {
		if _, err := svc.Put(context.Background(), ops.Request{Ref: kv[0], Value: vault.NewSecret([]byte(kv[1]))}); err != nil {
			t.Fatal(err)
		}
	}
	svc.Close()
}

// useFixture is a fixture on toml with the values stored.
func useFixture(t *testing.T, toml string) *fixture {
	t.Helper()
	f := newFixtureConfig(t, toml)
	putValues(t, f)
	return f
}

// useSession runs in through a session whose environment holds a PATH,
// a HOME and serveCanary, and checks that no credential reached stdout or
// stderr (the get of relRef answers relValue: a test that sends one says
// so with released).
func useSession(t *testing.T, f *fixture, in string) transcript {
	t.Helper()
	environ := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + f.home, "SERVE_CANARY=" + serveCanary}
	tr := f.session(t, sessionOpts{stdin: strings.NewReader(in), sent: []byte(in), environ: environ})
	noCredentials(t, tr)
	return tr
}

// noCredentials holds a transcript to the credentials never being on it:
// tokValue and userValue in any form the scrub engine knows, and the
// serve process's canary variable.
func noCredentials(t *testing.T, tr transcript) {
	t.Helper()
	for _, v := range []string{tokValue, userValue} {
		for _, form := range credentialForms(v) {
			if strings.Contains(string(tr.rawOut), form) {
				t.Errorf("stdout holds a form of a credential (%d bytes)", len(form))
			}
			if strings.Contains(string(tr.rawErr), form) {
				t.Errorf("stderr holds a form of a credential (%d bytes)", len(form))
			}
		}
	}
	for _, s := range []string{"canary-user", "TOKEN-canary", serveCanary} {
		if strings.Contains(string(tr.rawOut)+string(tr.rawErr), s) {
			t.Errorf("the output holds %q", s)
		}
	}
}

// credentialForms are v and the forms of it a reply could carry it in:
// JSON-escaped (the inside of the string), with and without its HTML
// escapes, and base64.
func credentialForms(v string) []string {
	j, _ := json.Marshal(v)
	var plain strings.Builder
	enc := json.NewEncoder(&plain)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	p := strings.TrimSpace(plain.String())
	b64 := base64.StdEncoding.EncodeToString([]byte(v))
	return []string{v, string(j[1 : len(j)-1]), p[1 : len(p)-1], b64[:len(b64)-4]}
}

// httpResult is a decoded result.http.
type httpResult struct {
	Service    string              `json:"service"`
	Status     int                 `json:"status"`
	Headers    map[string][]string `json:"headers"`
	Body       string              `json:"body"`
	BodyB64    string              `json:"body_b64"`
	Truncated  bool                `json:"truncated"`
	Redactions []struct {
		Ref   string `json:"ref"`
		Count int    `json:"count"`
	} `json:"redactions"`
}

// execResult is a decoded result.exec.
type execResult struct {
	ExitCode  int    `json:"exit_code"`
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`
	Truncated struct {
		Stdout, Stderr bool
	} `json:"truncated"`
	Redactions []struct {
		Ref   string `json:"ref"`
		Count int    `json:"count"`
	} `json:"redactions"`
}

// result decodes reply i's result into v.
func result(t *testing.T, tr transcript, i int, v any) {
	t.Helper()
	rs := tr.responses(t)
	if i >= len(rs) || !rs[i].OK {
		t.Fatalf("reply %d is not a success: %s", i+1, short(strings.Join(tr.stdout, "\n")))
	}
	if err := json.Unmarshal(rs[i].Result, v); err != nil {
		t.Fatalf("reply %d: %v", i+1, err)
	}
}

// causeOf is details.cause of reply i, "" when it has none.
func causeOf(t *testing.T, tr transcript, i int) string {
	t.Helper()
	var r struct {
		Error struct {
			Details struct {
				Cause string `json:"cause"`
			} `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(tr.stdout[i]), &r); err != nil {
		t.Fatal(err)
	}
	return r.Error.Details.Cause
}

// upstreamFailed is a reply upstream_failed.
func upstreamFailed(id string) want { return want{id: id, code: "upstream_failed"} }

// denied is a reply denied.
func denied(id string) want { return want{id: id, code: "denied"} }

// useEvents are the events of the uses, decoded whole, in order.
func useEvents(t *testing.T, tr transcript) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range tr.stderr {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		if m["op"] == "http" || m["op"] == "exec" {
			out = append(out, m)
		}
	}
	return out
}

// TestUseHTTPAuthKinds: the credential arrives as each auth kind says;
// a request header or query parameter that carries credentials or routing
// is refused bad_request and never leaves (the upstream saw no request).
func TestUseHTTPAuthKinds(t *testing.T) {
	u := newUpstream(t, nil)
	f := useFixture(t, u.service("bearer", "bearer", "")+
		u.service("basic", "basic", fmt.Sprintf("username_ref = %q", userRef))+
		u.service("header", "header", `header = "X-Api-Key"`)+
		u.service("query", "query", `query_param = "api_key"`))
	get := func(id int, svc, more string) string {
		return fmt.Sprintf(`{"id":%d,"op":"http","service":%q,"method":"GET","path":"/p%d"%s}`, id, svc, id, more)
	}
	tr := useSession(t, f, lines(
		get(1, "bearer", `,"query":{"q":"v"},"headers":{"X-Extra":"e"}`),
		get(2, "basic", ""),
		get(3, "header", ""),
		get(4, "query", `,"query":{"q":["a","b"]}`),
		get(5, "bearer", `,"headers":{"Authorization":"Bearer mine"}`),
		get(6, "bearer", `,"headers":{"authorization":"Bearer mine"}`),
		get(7, "bearer", `,"headers":{"Cookie":"a=b"}`),
		get(8, "bearer", `,"headers":{"Host":"evil.example"}`),
		get(9, "bearer", `,"headers":{"Proxy-Authorization":"Basic eA=="}`),
		get(10, "header", `,"headers":{"x-api-key":"mine"}`),
		get(11, "query", `,"query":{"API_KEY":"mine"}`),
		get(12, "nope", ""),
		get(13, "bearer", `,"headers":{"X-A":"a\r\nAuthorization: Bearer mine"}`),
		get(14, "bearer", `,"ref":"`+relRef+`"`), // a request names no credential
		get(15, "bearer", `,"headers":{"Proxy-Connection":"keep-alive"}`),
		get(16, "bearer", `,"headers":{"Transfer-Encoding":"chunked"}`),
	))
	checkReplies(t, tr, []want{ok("1"), ok("2"), ok("3"), ok("4"),
		bad("5", "Authorization"), bad("6", "Authorization"), bad("7", "Cookie"), bad("8", "Host"),
		bad("9", "Proxy-Authorization"), bad("10", "X-Api-Key"), bad("11", "API_KEY"), bad("12", "unknown service"),
		bad("13", "X-A"), bad("14", "ref"), bad("15", "Proxy-Connection"), bad("16", "Transfer-Encoding")})
	got := u.requests()
	if len(got) != 4 {
		t.Fatalf("the upstream saw %d requests, want the 4 allowed", len(got))
	}
	slices.SortFunc(got, func(a, b seen) int { return strings.Compare(a.path, b.path) })
	if a := got[0].header.Values("Authorization"); len(a) != 1 || a[0] != "Bearer "+tokValue {
		t.Errorf("bearer: the upstream did not get the credential as a bearer token (%d Authorization values)", len(a))
	}
	if got[0].rawQuery != "q=v" || got[0].header.Get("X-Extra") != "e" {
		t.Errorf("bearer: query %q, X-Extra %q: the caller's query and headers did not pass", got[0].rawQuery, got[0].header.Get("X-Extra"))
	}
	r := &http.Request{Header: got[1].header}
	if user, pass, ok := r.BasicAuth(); !ok || user != userValue || pass != tokValue {
		t.Errorf("basic: the upstream did not get the user and the credential as basic auth")
	}
	if v := got[2].header.Values("X-Api-Key"); len(v) != 1 || v[0] != tokValue || got[2].header.Get("Authorization") != "" {
		t.Errorf("header: the upstream did not get the credential in X-Api-Key alone")
	}
	if vs := queryOf(t, got[3].rawQuery); len(vs["api_key"]) != 1 || vs["api_key"][0] != tokValue || !slices.Equal(vs["q"], []string{"a", "b"}) {
		t.Errorf("query: the upstream did not get the credential in api_key beside the caller's q")
	}
	// The echo of what arrived is answered, the credential scrubbed.
	for i := range 4 {
		var res httpResult
		result(t, tr, i, &res)
		if res.Status != 200 || !strings.Contains(res.Body, "<redacted:svc/token>") {
			t.Errorf("reply %d: status %d, body %s: want 200 and the echoed credential redacted", i+1, res.Status, short(res.Body))
		}
	}
}

func queryOf(t *testing.T, raw string) url.Values {
	t.Helper()
	r, err := http.NewRequest("GET", "https://x/?"+raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r.URL.Query()
}

// TestUseScrubsEchoes: an upstream that echoes the credential in its body
// and a header, raw, base64 and JSON-escaped, is answered with each
// redacted; a value the session released earlier by get is redacted from
// an http body and from an action's output.
func TestUseScrubsEchoes(t *testing.T) {
	j, _ := json.Marshal(tokValue)
	b64 := base64.StdEncoding.EncodeToString([]byte(tokValue))
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/forms":
			w.Header().Set("X-Echo", tokValue)
			w.Header().Set("X-Echo-B64", b64)
			fmt.Fprintf(w, "raw=%s\nb64=%s\njson={\"t\":%s}\n", tokValue, b64, j)
		case "/released":
			fmt.Fprintf(w, "released=%s\n", relValue)
		}
	})
	f := useFixture(t, u.service("api", "bearer", "")+`
[actions.echo]
argv = ["sh", "-c", 'printf "tok=%s\n" "$TOKEN"; printf "rel=%s\n" "$1"; printf "err=%s\n" "$TOKEN" >&2', "sh"]
args = "^[A-Za-z0-9-]+$"
env = { TOKEN = "`+tokRef+`" }
`)
	tr := useSession(t, f, lines(
		`{"id":1,"op":"http","service":"api","method":"GET","path":"/forms"}`,
		`{"id":2,"op":"get","ref":"`+relRef+`"}`,
		`{"id":3,"op":"http","service":"api","method":"GET","path":"/released"}`,
		`{"id":4,"op":"exec","action":"echo","args":["`+relValue+`"]}`,
	))
	checkReplies(t, tr, []want{ok("1"), ok("2"), ok("3"), ok("4")})
	if len(tr.stdout) != 4 {
		t.FailNow()
	}
	var forms httpResult
	result(t, tr, 0, &forms)
	const red = "<redacted:svc/token>"
	for _, name := range []string{"X-Echo", "X-Echo-B64"} {
		if v := forms.Headers[name]; len(v) != 1 || !strings.HasPrefix(v[0], red) {
			t.Errorf("header %s answered as %q, want the echo redacted", name, v)
		}
	}
	for _, l := range []string{"raw=" + red + "\n", "b64=" + red, `json={"t":"` + red + `"}`} {
		if !strings.Contains(forms.Body, l) {
			t.Errorf("the body %q does not hold %q", forms.Body, l)
		}
	}
	if len(forms.Redactions) != 1 || forms.Redactions[0].Ref != tokRef || forms.Redactions[0].Count != 5 {
		t.Errorf("redactions %+v, want 5 of %s", forms.Redactions, tokRef)
	}
	var got struct {
		Value string `json:"value"`
	}
	result(t, tr, 1, &got)
	if got.Value != relValue {
		t.Fatalf("the get did not answer the value released (the positive control of what follows)")
	}
	var rel httpResult
	result(t, tr, 2, &rel)
	if rel.Body != "released=<redacted:app/released>\n" {
		t.Errorf("http body %q, want the released value redacted", rel.Body)
	}
	var ex execResult
	result(t, tr, 3, &ex)
	if ex.Stdout != "tok="+red+"\nrel=<redacted:app/released>\n" || ex.Stderr != "err="+red+"\n" || ex.ExitCode != 0 {
		t.Errorf("exec: stdout %q, stderr %q, exit %d: want both values redacted", ex.Stdout, ex.Stderr, ex.ExitCode)
	}
	if strings.Contains(strings.Join(tr.stdout[2:], "\n"), relValue) {
		t.Errorf("the released value is in a use's answer")
	}
}

// TestUseHTTPTruncation: a body past max_response_bytes is cut there and
// answered truncated; a credential the cut goes through leaves none of its
// bytes in the body.
func TestUseHTTPTruncation(t *testing.T) {
	const max = 64
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/long":
			fmt.Fprint(w, strings.Repeat("a", 200))
		case "/straddle": // the cut falls 10 bytes into the credential
			fmt.Fprint(w, strings.Repeat("a", max-10)+tokValue+strings.Repeat("b", 100))
		case "/fits":
			fmt.Fprint(w, strings.Repeat("a", max))
		}
	})
	f := useFixture(t, u.service("api", "bearer", fmt.Sprintf("max_response_bytes = %d", max)))
	tr := useSession(t, f, lines(
		`{"id":1,"op":"http","service":"api","method":"GET","path":"/long"}`,
		`{"id":2,"op":"http","service":"api","method":"GET","path":"/straddle"}`,
		`{"id":3,"op":"http","service":"api","method":"GET","path":"/fits"}`,
	))
	checkReplies(t, tr, []want{ok("1"), ok("2"), ok("3")})
	var long, straddle, fits httpResult
	result(t, tr, 0, &long)
	result(t, tr, 1, &straddle)
	result(t, tr, 2, &fits)
	if long.Body != strings.Repeat("a", max) || !long.Truncated {
		t.Errorf("long: %d bytes, truncated %v; want %d and true", len(long.Body), long.Truncated, max)
	}
	if fits.Body != strings.Repeat("a", max) || fits.Truncated {
		t.Errorf("fits: %d bytes, truncated %v; want %d and false", len(fits.Body), fits.Truncated, max)
	}
	if !straddle.Truncated || !strings.HasPrefix(straddle.Body, strings.Repeat("a", max-10)) {
		t.Fatalf("straddle: truncated %v, body %q", straddle.Truncated, straddle.Body)
	}
	if rest := strings.TrimPrefix(straddle.Body, strings.Repeat("a", max-10)); rest != "" && rest != "<redacted:svc/token>" {
		t.Errorf("straddle: the body ends %q after the a's: bytes of the credential are left", rest)
	}
	for _, e := range useEvents(t, tr) {
		if e["bytes_out"] == nil || e["bytes_out"].(float64) > max {
			t.Errorf("event %v: bytes_out past the cap", e["id"])
		}
	}
}

// TestUseHTTPPathsAndMethodsDenied: the traversal spellings and a method
// the service does not allow are denied, and the upstream sees none of
// them.
func TestUseHTTPPathsAndMethodsDenied(t *testing.T) {
	u := newUpstream(t, nil)
	svc := strings.Replace(u.service("api", "bearer", ""), `paths = ["/*"]`, `paths = ["/repos/*"]`, 1)
	f := useFixture(t, svc)
	req := func(id int, method, path string) string {
		return fmt.Sprintf(`{"id":%d,"op":"http","service":"api","method":%q,"path":%q}`, id, method, path)
	}
	tr := useSession(t, f, lines(
		req(1, "GET", "/repos/../admin"),
		req(2, "GET", "//evil.example/x"),
		req(3, "GET", "/%2e%2e/"),
		req(4, "GET", "/repos/%2F.."),
		req(5, "GET", "/repos/%2e%2e/admin"),
		req(6, "GET", "/repos/x/../../admin"),
		req(7, "GET", "/repos//x"),
		req(8, "GET", "/repos/%5c..%5cadmin"),
		req(9, "GET", "/admin"),
		req(10, "POST", "/repos/x"),
		req(11, "DELETE", "/repos/x"),
		req(12, "GET", "/repos/x"), // the positive control
	))
	ws := []want{}
	for i := 1; i <= 11; i++ {
		ws = append(ws, denied(fmt.Sprint(i)))
	}
	checkReplies(t, tr, append(ws, ok("12")))
	if got := u.requests(); len(got) != 1 || got[0].path != "/repos/x" {
		t.Errorf("the upstream saw %d requests, want the one allowed", len(got))
	}
	for _, e := range useEvents(t, tr)[:11] {
		if e["event"] != "denied" || e["service"] != "api" {
			t.Errorf("event %v: %v for service %v, want denied for api", e["id"], e["event"], e["service"])
		}
	}
}

// TestUseHTTPRedirects: with follow_redirects none a cross-origin
// redirect is answered as it is, not followed; with same-origin it is
// upstream_failed (redirect) and the other origin sees nothing, while a
// redirect on the origin is followed.
func TestUseHTTPRedirects(t *testing.T) {
	other := newUpstream(t, nil)
	var u *upstreamSrv
	u = newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.srv.URL+"/stolen", http.StatusFound)
		case "/home":
			http.Redirect(w, r, u.srv.URL+"/landed", http.StatusFound)
		case "/downgrade": // the same host and port, in clear
			http.Redirect(w, r, strings.Replace(u.srv.URL, "https:", "http:", 1)+"/landed", http.StatusFound)
		case "/other-port":
			http.Redirect(w, r, other.srv.URL+"/landed", http.StatusTemporaryRedirect)
		default:
			echo(w, r)
		}
	})
	f := useFixture(t, u.service("none", "bearer", "")+u.service("same", "bearer", `follow_redirects = "same-origin"`))
	tr := useSession(t, f, lines(
		`{"id":1,"op":"http","service":"none","method":"GET","path":"/away"}`,
		`{"id":2,"op":"http","service":"same","method":"GET","path":"/away"}`,
		`{"id":3,"op":"http","service":"same","method":"GET","path":"/home"}`,
		`{"id":4,"op":"http","service":"same","method":"GET","path":"/downgrade"}`,
		`{"id":5,"op":"http","service":"same","method":"GET","path":"/other-port"}`,
	))
	checkReplies(t, tr, []want{ok("1"), upstreamFailed("2"), ok("3"), upstreamFailed("4"), upstreamFailed("5")})
	if len(tr.stdout) != 5 {
		t.FailNow()
	}
	var none, home httpResult
	result(t, tr, 0, &none)
	if none.Status != http.StatusFound || len(none.Headers["Location"]) != 1 || none.Headers["Location"][0] != other.srv.URL+"/stolen" {
		t.Errorf("none: status %d, Location %q: want the 302 as it is", none.Status, none.Headers["Location"])
	}
	if c := causeOf(t, tr, 1); c != "redirect" {
		t.Errorf("same-origin, away: cause %q, want redirect", c)
	}
	result(t, tr, 2, &home)
	if home.Status != 200 || !strings.Contains(home.Body, `"path":"/landed"`) {
		t.Errorf("same-origin, home: status %d, body %s: want the redirect followed", home.Status, short(home.Body))
	}
	if n := len(other.requests()); n != 0 {
		t.Errorf("the other origin saw %d requests", n)
	}
	got := u.requests() // the uses run at once: in any order
	i := slices.IndexFunc(got, func(s seen) bool { return s.path == "/landed" })
	if len(got) != 6 || i < 0 || got[i].header.Get("Authorization") != "Bearer "+tokValue {
		t.Errorf("the upstream saw %d requests; want away, away, home, landed, downgrade and other-port, the credential on landed", len(got))
	}
	for _, i := range []int{3, 4} {
		if c := causeOf(t, tr, i); c != "redirect" {
			t.Errorf("reply %d: cause %q, want redirect", i+1, c)
		}
	}
	if es := useEvents(t, tr); len(es) == 5 && (es[1]["cause"] != "redirect" || es[1]["event"] != "error") {
		t.Errorf("same-origin, away: event %v cause %v", es[1]["event"], es[1]["cause"])
	}
}

// TestUseHTTPBlockedAddress: without allow_private, a service whose host
// is or resolves to a loopback or metadata address is upstream_failed
// (blocked_address) and nothing is dialled.
func TestUseHTTPBlockedAddress(t *testing.T) {
	u := newUpstream(t, nil)
	port := u.srv.URL[strings.LastIndexByte(u.srv.URL, ':')+1:]
	var toml string
	for name, host := range map[string]string{"literal": "127.0.0.1", "name": "localhost", "metadata": "169.254.169.254", "mapped": "[::ffff:127.0.0.1]"} {
		toml += fmt.Sprintf("[services.%s]\nbase_url = \"https://%s:%s\"\ncredential = %q\nauth = \"bearer\"\npaths = [\"/*\"]\ntls_ca = %q\n",
			name, host, port, tokRef, u.ca)
	}
	f := useFixture(t, toml)
	tr := useSession(t, f, lines(
		`{"id":1,"op":"http","service":"literal","method":"GET","path":"/x"}`,
		`{"id":2,"op":"http","service":"name","method":"GET","path":"/x"}`,
		`{"id":3,"op":"http","service":"metadata","method":"GET","path":"/x"}`,
		`{"id":4,"op":"http","service":"mapped","method":"GET","path":"/x"}`,
	))
	checkReplies(t, tr, []want{upstreamFailed("1"), upstreamFailed("2"), upstreamFailed("3"), upstreamFailed("4")})
	for i := range tr.stdout {
		if c := causeOf(t, tr, i); c != "blocked_address" {
			t.Errorf("reply %d: cause %q, want blocked_address", i+1, c)
		}
	}
	if n := len(u.requests()); n != 0 {
		t.Errorf("the upstream saw %d requests", n)
	}
}

// TestUseExec: an argument that does not match never starts the child; a
// matching one runs it with the ref in its environment and nothing of
// serve's but the PDP allowlist; past its timeout it is upstream_failed
// (timeout); a command that is not there is upstream_failed (start).
func TestUseExec(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "started")
	f := useFixture(t, fmt.Sprintf(`
[actions.touch]
argv = ["sh", "-c", 'touch "$0"', %q]
args = "^--dry-run$"
env = { TOKEN = %q }

[actions.env]
argv = ["env"]
env = { TOKEN = %q, USER_NAME = %q }

[actions.slow]
argv = ["sleep", "30"]
timeout_ms = 100
env = { TOKEN = %q }

[actions.missing]
argv = ["arca-no-such-command-4e1f"]
env = { TOKEN = %q }

[actions.fails]
argv = ["sh", "-c", "exit 3"]
env = { TOKEN = %q }

[actions.cut]
argv = ["sh", "-c", 'printf "aaaaaaaaaaaaaaaa%%s" "$TOKEN"; printf "%%s" "$TOKEN" >&2']
max_output_bytes = 20
env = { TOKEN = %q }
`, marker, tokRef, tokRef, userRef, tokRef, tokRef, tokRef, tokRef))
	tr := useSession(t, f, lines(
		`{"id":1,"op":"exec","action":"touch","args":["--evil"]}`,
		`{"id":2,"op":"exec","action":"touch","args":["--dry-run","--dry-run","--dry-run","--dry-run","--dry-run"]}`,
		`{"id":3,"op":"exec","action":"touch","args":["--dry-run; rm -rf /"]}`,
		`{"id":4,"op":"exec","action":"nope"}`,
		`{"id":5,"op":"exec","action":"env","args":["x"]}`,
	))
	checkReplies(t, tr, []want{bad("1", ""), bad("2", ""), bad("3", ""), bad("4", "unknown action"), bad("5", "")})
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("an argument refused started the child (marker: %v)", err)
	}
	tr = useSession(t, f, lines(
		`{"id":1,"op":"exec","action":"touch","args":["--dry-run"]}`,
		`{"id":2,"op":"exec","action":"env"}`,
		`{"id":3,"op":"exec","action":"slow"}`,
		`{"id":4,"op":"exec","action":"missing"}`,
		`{"id":5,"op":"exec","action":"fails"}`,
		`{"id":6,"op":"exec","action":"cut"}`,
	))
	checkReplies(t, tr, []want{ok("1"), ok("2"), upstreamFailed("3"), upstreamFailed("4"), ok("5"), ok("6")})
	if len(tr.stdout) != 6 {
		t.FailNow()
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the argument allowed did not start the child (the positive control): %v", err)
	}
	var env execResult
	result(t, tr, 1, &env)
	var names []string
	for _, l := range strings.Split(strings.TrimSuffix(env.Stdout, "\n"), "\n") {
		name, val, _ := strings.Cut(l, "=")
		names = append(names, name)
		if (name == "TOKEN" && val != "<redacted:svc/token>") || (name == "USER_NAME" && val != "<redacted:svc/user>") {
			t.Errorf("the child's %s is answered as %q, want it redacted", name, val)
		}
	}
	slices.Sort(names)
	if want := []string{"HOME", "PATH", "TOKEN", "USER_NAME"}; !slices.Equal(names, want) {
		t.Errorf("the child's environment holds %v, want %v (serve's allowlist and the action's refs)", names, want)
	}
	if c := causeOf(t, tr, 2); c != "timeout" {
		t.Errorf("slow: cause %q, want timeout", c)
	}
	if c := causeOf(t, tr, 3); c != "start" {
		t.Errorf("missing: cause %q, want start", c)
	}
	var fails execResult
	result(t, tr, 4, &fails)
	if fails.ExitCode != 3 {
		t.Errorf("fails: exit code %d, want 3", fails.ExitCode)
	}
	var cut execResult
	result(t, tr, 5, &cut)
	if !cut.Truncated.Stdout || !cut.Truncated.Stderr || strings.TrimPrefix(cut.Stdout, "aaaaaaaaaaaaaaaa") != "" || cut.Stderr != "" {
		t.Errorf("cut: stdout %q, stderr %q, truncated %+v: want each cut inside the credential, none of it left", cut.Stdout, cut.Stderr, cut.Truncated)
	}
	es := useEvents(t, tr)
	if len(es) == 6 && (es[2]["cause"] != "timeout" || es[3]["cause"] != "start" || es[4]["exit_code"] != 3.0 || es[1]["redactions"] != 2.0) {
		t.Errorf("events: slow cause %v, missing cause %v, fails exit_code %v, env redactions %v", es[2]["cause"], es[3]["cause"], es[4]["exit_code"], es[1]["redactions"])
	}
}

// TestUsePDP: the PDP is asked about an http op on the credential's ref
// with the use object, and about an exec on each ref of its env; a deny
// is denied and nothing reaches the upstream or starts.
func TestUsePDP(t *testing.T) {
	u := newUpstream(t, nil)
	marker := filepath.Join(t.TempDir(), "started")
	uses := u.service("api", "basic", fmt.Sprintf("username_ref = %q\nmethods = [\"GET\", \"POST\"]", userRef)) + fmt.Sprintf(`
[actions.touch]
argv = ["sh", "-c", 'touch "$0"', %q]
env = { TOKEN = %q }
`, marker, tokRef)
	in := lines(
		`{"id":1,"op":"http","service":"api","method":"POST","path":"/repos/%78","actor":"agent:x","body":"b"}`,
		`{"id":2,"op":"exec","action":"touch"}`,
	)
	t.Run("allow", func(t *testing.T) {
		f, log := pdpFixture(t, `echo '{"allow":true}'`, uses)
		putValues(t, f)
		tr := useSession(t, f, in)
		checkReplies(t, tr, []want{ok("1"), ok("2")})
		reqs := consulted(t, log)
		if len(reqs) != 3 {
			t.Fatalf("the PDP was asked %d times, want 3 (the service's credential and user, the action's ref)", len(reqs))
		}
		slices.SortFunc(reqs, func(a, b map[string]any) int {
			return strings.Compare(fmt.Sprint(a["op"], a["ref"]), fmt.Sprint(b["op"], b["ref"]))
		})
		if _, err := os.Stat(marker); err != nil {
			t.Errorf("the action allowed did not run: %v", err)
		}
		wantUse := map[string]any{"kind": "service", "name": "api", "method": "POST", "path": "/repos/x", "via": "op"}
		for i, ref := range []string{"svc/token", "svc/user"} {
			r := reqs[1+i]
			if r["op"] != "http" || r["ref"] != ref || r["actor"] != "agent:x" || r["env"] != "default" {
				t.Errorf("PDP request %v: want op http on %s for agent:x", r, ref)
			}
			if fmt.Sprint(r["use"]) != fmt.Sprint(wantUse) {
				t.Errorf("PDP request use %v, want %v", r["use"], wantUse)
			}
		}
		if r := reqs[0]; r["op"] != "exec" || r["ref"] != "svc/token" || fmt.Sprint(r["use"]) != fmt.Sprint(map[string]any{"kind": "action", "name": "touch", "via": "op"}) {
			t.Errorf("PDP request %v: want op exec on svc/token with the action's use", r)
		}
		if got := u.requests(); len(got) != 1 || got[0].path != "/repos/%78" {
			t.Errorf("the upstream saw %d requests, want the one allowed", len(got))
		}
	})
	t.Run("deny", func(t *testing.T) {
		f, log := pdpFixture(t, `echo '{"allow":false,"reason":"not today"}'`, uses)
		putValues(t, f)
		u.mu.Lock()
		u.got = nil
		u.mu.Unlock()
		os.Remove(marker)
		tr := useSession(t, f, in)
		checkReplies(t, tr, []want{{id: "1", code: "denied", msg: "not today"}, {id: "2", code: "denied", msg: "not today"}})
		if len(consulted(t, log)) != 2 {
			t.Errorf("the PDP was asked %d times, want once a use", len(consulted(t, log)))
		}
		if n := len(u.requests()); n != 0 {
			t.Errorf("the upstream saw %d requests", n)
		}
		if _, err := os.Stat(marker); !os.IsNotExist(err) {
			t.Errorf("the action denied ran")
		}
		if f.spy.counted("get") != 0 {
			t.Errorf("a denied use read its credential")
		}
	})
}

// TestUseGuardrails: a guardrail on the credential's ref that names the
// op denies the use before the PDP, the vault and the network.
func TestUseGuardrails(t *testing.T) {
	u := newUpstream(t, nil)
	marker := filepath.Join(t.TempDir(), "started")
	uses := u.service("api", "bearer", "") + fmt.Sprintf(`
[actions.touch]
argv = ["sh", "-c", 'touch "$0"', %q]
env = { TOKEN = %q }
`, marker, tokRef)
	for _, c := range []struct{ name, rule string }{
		{"op", "ops = [\"http\", \"exec\"]\nref = \"svc/*\"\n"},
		{"every op", "ref = \"svc/token\"\nactor = \"agent:*\"\n"}, // the put of the fixture claims no actor
	} {
		t.Run(c.name, func(t *testing.T) {
			f := useFixture(t, uses+"[[guardrails.rule]]\n"+c.rule+"reason = \"hands off\"\n")
			f.spy.reset()
			tr := useSession(t, f, lines(
				`{"id":1,"op":"http","service":"api","method":"GET","path":"/x","actor":"agent:x"}`,
				`{"id":2,"op":"exec","action":"touch","actor":"agent:x"}`,
			))
			checkReplies(t, tr, []want{{id: "1", code: "denied", msg: "hands off"}, {id: "2", code: "denied", msg: "hands off"}})
			if n := len(u.requests()); n != 0 {
				t.Errorf("the upstream saw %d requests", n)
			}
			if _, err := os.Stat(marker); !os.IsNotExist(err) {
				t.Errorf("the action ran")
			}
			if f.spy.counted("get") != 0 {
				t.Errorf("a use a guardrail denied read its credential")
			}
		})
	}
}

// heldUpstream is an upstream whose every request to /item/N waits until
// the test releases N; it counts the requests held at once.
type heldUpstream struct {
	*upstreamSrv
	arrived chan int // N, as each arrives
	gates   []chan struct{}
	mu      sync.Mutex
	held    int
	maxHeld int
	over    chan struct{} // closed once more than manifest.MaxUses are held
	overOne sync.Once
}

func newHeldUpstream(t *testing.T, n int) *heldUpstream {
	h := &heldUpstream{arrived: make(chan int, n), gates: make([]chan struct{}, n+1), over: make(chan struct{})}
	for i := range h.gates {
		h.gates[i] = make(chan struct{})
	}
	h.upstreamSrv = newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		var i int
		if _, err := fmt.Sscanf(r.URL.Path, "/item/%d", &i); err != nil || i < 1 || i > n {
			http.Error(w, "no such item", http.StatusNotFound)
			return
		}
		h.mu.Lock()
		h.held++
		h.maxHeld = max(h.maxHeld, h.held)
		if h.held > manifest.MaxUses {
			h.overOne.Do(func() { close(h.over) })
		}
		h.mu.Unlock()
		h.arrived <- i
		<-h.gates[i]
		h.mu.Lock()
		h.held--
		h.mu.Unlock()
		fmt.Fprintf(w, "item %d", i)
	})
	return h
}

// maxHeldNow is the most requests held at once so far.
func (h *heldUpstream) maxHeldNow() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.maxHeld
}

// release lets request i go.
func (h *heldUpstream) release(i int) { close(h.gates[i]) }

// next waits for the next request to arrive; ok is false once more than
// manifest.MaxUses are held, or when none arrives within a generous bound
// (the test then fails rather than hangs).
func (h *heldUpstream) next() (int, bool) {
	select {
	case <-h.over:
		return 0, false
	default:
	}
	select {
	case i := <-h.arrived:
		return i, true
	case <-h.over:
		return 0, false
	case <-time.After(30 * time.Second):
		return 0, false
	}
}

// TestUseInFlight: 16 http ops pipelined against an upstream that holds
// each request: 8 reach it before any is answered, and no more while
// those are held; the 16 are answered in request order, their events
// too, whatever order the upstream answers them in.
func TestUseInFlight(t *testing.T) {
	const n = 16
	h := newHeldUpstream(t, n)
	f := useFixture(t, h.service("api", "bearer", ""))
	var in []string
	for i := 1; i <= n; i++ {
		in = append(in, fmt.Sprintf(`{"id":%d,"op":"http","service":"api","method":"GET","path":"/item/%d"}`, i, i))
	}
	failed := make(chan string, 1)
	go func() {
		defer func() {
			for i := 1; i <= n; i++ {
				select {
				case <-h.gates[i]:
				default:
					h.release(i)
				}
			}
		}()
		for range n / manifest.MaxUses {
			var got []int
			for len(got) < manifest.MaxUses {
				i, ok := h.next()
				if !ok {
					failed <- fmt.Sprintf("%d of a batch of %d requests reached the upstream (at most %d held at once): more or fewer than %d were begun at once",
						len(got), manifest.MaxUses, h.maxHeldNow(), manifest.MaxUses)
					return
				}
				got = append(got, i)
			}
			// Answered newest first: serve answers them in request order.
			slices.Sort(got)
			for _, i := range slices.Backward(got) {
				h.release(i)
			}
		}
	}()
	tr := useSession(t, f, lines(in...))
	select {
	case msg := <-failed:
		t.Fatal(msg)
	default:
	}
	ws := make([]want, n)
	for i := range ws {
		ws[i] = ok(fmt.Sprint(i + 1))
	}
	checkReplies(t, tr, ws)
	for i := range min(n, len(tr.stdout)) {
		var res httpResult
		result(t, tr, i, &res)
		if res.Body != fmt.Sprintf("item %d", i+1) {
			t.Errorf("reply %d answers %q", i+1, res.Body)
		}
	}
	for i, e := range useEvents(t, tr) {
		if e["id"] != float64(i+1) || e["path"] != fmt.Sprintf("/item/%d", i+1) {
			t.Errorf("use event %d is of id %v, path %v", i+1, e["id"], e["path"])
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.maxHeld != manifest.MaxUses {
		t.Errorf("%d requests were held at once, want %d", h.maxHeld, manifest.MaxUses)
	}
}

// TestUseReadsAhead: while a use waits on its upstream, serve reads the
// next line and starts it: a client that sends one http op, waits until
// the upstream has it, then sends another, sees the second reach the
// upstream while the first is still held.
func TestUseReadsAhead(t *testing.T) {
	h := newHeldUpstream(t, 2)
	f := useFixture(t, h.service("api", "bearer", ""))
	first := `{"id":1,"op":"http","service":"api","method":"GET","path":"/item/1"}` + "\n"
	second := `{"id":2,"op":"http","service":"api","method":"GET","path":"/item/2"}` + "\n"
	pr, pw := io.Pipe()
	failed := make(chan string, 1)
	go func() {
		defer pw.Close()
		defer func() {
			for i := 1; i <= 2; i++ {
				select {
				case <-h.gates[i]:
				default:
					h.release(i)
				}
			}
		}()
		if _, err := io.WriteString(pw, first); err != nil {
			failed <- err.Error()
			return
		}
		if i, ok := h.next(); !ok || i != 1 {
			failed <- "the first request never reached the upstream"
			return
		}
		if _, err := io.WriteString(pw, second); err != nil {
			failed <- err.Error()
			return
		}
		if i, ok := h.next(); !ok || i != 2 {
			failed <- "the second request did not reach the upstream while the first was held"
		}
	}()
	environ := []string{"PATH=" + os.Getenv("PATH")}
	tr := f.session(t, sessionOpts{stdin: pr, sent: []byte(first + second), environ: environ})
	noCredentials(t, tr)
	select {
	case msg := <-failed:
		t.Fatal(msg)
	default:
	}
	checkReplies(t, tr, []want{ok("1"), ok("2")})
}

// TestUseScrubsWhenTheSessionIsFull: a session that has released values
// up to the scrub engine's bounds still has a use's credential scrubbed
// from its outcome.
func TestUseScrubsWhenTheSessionIsFull(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "raw=%s\n", tokValue)
	})
	f := useFixture(t, u.service("api", "bearer", "")+`
[actions.echo]
argv = ["sh", "-c", 'printf "tok=%s\n" "$TOKEN"']
env = { TOKEN = "`+tokRef+`" }
`)
	// Values released until the session's scrub set is full (its forms
	// at scrub.MaxFormBytes): sizes tried largest first, each while it
	// fits, as the session's set would take them; the positive control is
	// that the credential no longer fits such a set.
	svc := f.ops.NewService(t, opstest.Options{Now: fixedClock})
	full := scrub.NewSet()
	var in []string
	for _, size := range []int{64<<10 - 1, 8 << 10, 1 << 10, 128, 16} {
		for {
			i := len(in)
			v := []byte(strings.Repeat(fmt.Sprintf("v%04d", i), size)[:size])
			if full.Add(fmt.Sprintf("app/v%04d", i), v) != nil {
				break
			}
			ref := fmt.Sprintf("arca://app/v%04d", i)
			if _, err := svc.Put(context.Background(), ops.Request{Ref: ref, Value: vault.NewSecret(v)}); err != nil {
				t.Fatal(err)
			}
			in = append(in, fmt.Sprintf(`{"id":%d,"op":"get","ref":%q}`, i+1, ref))
		}
	}
	if full.Add("svc/token", []byte(tokValue)) == nil {
		t.Fatalf("%d values do not fill a scrub set", len(in))
	}
	svc.Close()
	in = append(in, `{"id":"http","op":"http","service":"api","method":"GET","path":"/x"}`, `{"id":"exec","op":"exec","action":"echo"}`)
	tr := useSession(t, f, lines(in...))
	if len(u.requests()) != 1 {
		t.Fatalf("the upstream saw %d requests, want 1", len(u.requests()))
	}
	n := len(tr.stdout)
	if n != len(in) {
		t.Fatalf("%d replies, want %d", n, len(in))
	}
	var res httpResult
	result(t, tr, n-2, &res)
	if res.Body != "raw=<redacted:svc/token>\n" {
		t.Errorf("http: body %q: want the credential redacted", strings.ReplaceAll(res.Body, tokValue, "<THE CREDENTIAL>"))
	}
	var ex execResult
	result(t, tr, n-1, &ex)
	if ex.Stdout != "tok=<redacted:svc/token>\n" {
		t.Errorf("exec: stdout %q: want the credential redacted", strings.ReplaceAll(ex.Stdout, tokValue, "<THE CREDENTIAL>"))
	}
}

// TestUseEvents: the event of a use records the service or action, the
// method, the path (never the query), the status or exit code, the bytes
// each way, the time, the redactions and the credential's ref and
// version, via op, and nothing the request or the outcome carried.
func TestUseEvents(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Echo", tokValue)
		fmt.Fprintf(w, "RESPBODY-7f2 %s", tokValue)
	})
	f := useFixture(t, u.service("api", "bearer", `methods = ["GET", "POST"]`)+fmt.Sprintf(`
[actions.say]
argv = ["sh", "-c", 'echo OUTPUT-4c1 "$TOKEN"; exit 2']
env = { TOKEN = %q }
`, tokRef))
	tr := useSession(t, f, lines(
		`{"id":1,"op":"http","service":"api","method":"POST","path":"/v1/%69tems","query":{"q":"QUERYVAL-91a"},"headers":{"X-H":"HDRVAL-3b8"},"body":"BODYVAL-e05"}`,
		`{"id":2,"op":"exec","action":"say"}`,
		`{"id":3,"op":"http","service":"api","method":"GET","path":"/x","headers":{"Authorization":"AUTHVAL-22d"}}`,
	))
	checkReplies(t, tr, []want{ok("1"), ok("2"), bad("3", "Authorization")})
	for _, s := range []string{"QUERYVAL", "HDRVAL", "BODYVAL", "RESPBODY", "OUTPUT-4c1", "AUTHVAL"} {
		if strings.Contains(string(tr.rawErr), s) {
			t.Errorf("an event holds %s", s)
		}
	}
	if len(u.requests()) != 1 || !strings.Contains(string(tr.rawOut), "RESPBODY") || !strings.Contains(string(tr.rawOut), "OUTPUT-4c1") {
		t.Fatalf("the positive control: the upstream saw %d requests, want 1, and the outcomes are on stdout", len(u.requests()))
	}
	es := useEvents(t, tr)
	if len(es) != 3 {
		t.Fatalf("%d use events, want 3", len(es))
	}
	wants := []map[string]any{
		{"event": "http", "outcome": "ok", "service": "api", "method": "POST", "path": "/v1/items", "status": 200.0,
			"bytes_in": float64(len("BODYVAL-e05")), "bytes_out": float64(len("RESPBODY-7f2 " + tokValue)), "redactions": 2.0,
			"ref": "svc/token", "version": 1.0, "via": "op", "env": "default"},
		{"event": "exec", "outcome": "ok", "action": "say", "exit_code": 2.0, "bytes_in": 0.0,
			"bytes_out": float64(len("OUTPUT-4c1 " + tokValue + "\n")), "redactions": 1.0, "ref": "svc/token", "version": 1.0, "via": "op"},
		{"event": "error", "code": "bad_request", "service": "api", "method": "GET", "path": "/x", "via": "op"},
	}
	for i, w := range wants {
		for k, v := range w {
			if es[i][k] != v {
				t.Errorf("use event %d: %s = %v, want %v", i+1, k, es[i][k], v)
			}
		}
		if _, ok := es[i]["elapsed_ms"]; !ok && i < 2 {
			t.Errorf("use event %d has no elapsed_ms", i+1)
		}
	}
	for _, k := range []string{"method", "path", "status", "service"} {
		if _, ok := es[1][k]; ok {
			t.Errorf("the exec event has %s", k)
		}
	}
}

// TestUseCanary runs one session through every use above and the ways
// they fail, and holds its stdout and stderr to never carrying a
// credential (noCredentials); the positive control is that the upstream
// received each.
func TestUseCanary(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/redirect": // http.Redirect would write the URL in a body, HTML-escaped: a form scrub does not know
			w.Header().Set("Location", "https://example.com/?t="+tokValue)
			w.WriteHeader(http.StatusFound)
		case "/long":
			fmt.Fprint(w, strings.Repeat("a", 60)+tokValue)
		case "/b64":
			fmt.Fprint(w, base64.StdEncoding.EncodeToString([]byte(tokValue)))
		case "/not-utf8":
			w.Write(append([]byte{0xff, 0xfe}, tokValue...))
		case "/error":
			w.Header().Set("WWW-Authenticate", "Bearer "+tokValue)
			http.Error(w, "bad token "+tokValue, http.StatusUnauthorized)
		default:
			echo(w, r)
		}
	})
	port := u.srv.URL[strings.LastIndexByte(u.srv.URL, ':')+1:]
	f := useFixture(t, u.service("bearer", "bearer", `methods = ["GET", "POST"]`+"\nmax_response_bytes = 64")+
		u.service("basic", "basic", fmt.Sprintf("username_ref = %q", userRef))+
		u.service("header", "header", `header = "X-Api-Key"`)+
		u.service("query", "query", `query_param = "api_key"`+"\n"+`follow_redirects = "same-origin"`)+
		fmt.Sprintf("[services.blocked]\nbase_url = \"https://localhost:%s\"\ncredential = %q\nauth = \"bearer\"\npaths = [\"/*\"]\n", port, tokRef)+
		fmt.Sprintf(`
[actions.env]
argv = ["env"]
env = { TOKEN = %q, USER_NAME = %q }

[actions.say]
argv = ["sh", "-c", 'printf "%%s\n" "$TOKEN" | base64; printf "%%s" "$TOKEN" >&2; printf "$1"', "sh"]
args = "^[a-z]+$"
env = { TOKEN = %q }

[actions.slow]
argv = ["sh", "-c", 'echo "$TOKEN"; sleep 30']
timeout_ms = 200
env = { TOKEN = %q }
`, tokRef, userRef, tokRef, tokRef))
	h := func(id int, svc, method, path, more string) string {
		return fmt.Sprintf(`{"id":%d,"op":"http","service":%q,"method":%q,"path":%q%s}`, id, svc, method, path, more)
	}
	in := lines(
		h(1, "bearer", "GET", "/echo", ""),
		h(2, "basic", "GET", "/echo", ""),
		h(3, "header", "GET", "/echo", ""),
		h(4, "query", "GET", "/echo", ""),
		h(5, "bearer", "GET", "/long", ""),
		h(6, "bearer", "GET", "/b64", ""),
		h(7, "bearer", "GET", "/not-utf8", ""),
		h(8, "bearer", "GET", "/error", ""),
		h(9, "bearer", "GET", "/redirect", ""),
		h(10, "query", "GET", "/redirect", ""),
		h(11, "bearer", "GET", "/%2e%2e/x", ""),
		h(12, "bearer", "DELETE", "/x", ""),
		h(13, "bearer", "GET", "/x", `,"headers":{"Authorization":"x"}`),
		h(14, "blocked", "GET", "/x", ""),
		h(15, "bearer", "POST", "/echo", `,"body_b64":"`+base64.StdEncoding.EncodeToString([]byte("hello"))+`"`),
		`{"id":16,"op":"exec","action":"env"}`,
		`{"id":17,"op":"exec","action":"say","args":["x"]}`,
		`{"id":18,"op":"exec","action":"say","args":["X Y"]}`,
		`{"id":19,"op":"exec","action":"slow"}`,
		`{"id":20,"op":"get","ref":"`+relRef+`"}`,
		`{"id":21,"op":"scrub","text":"`+relValue+`"}`,
		`{"id":22,"op":"list"}`,
	)
	tr := useSession(t, f, in)
	checkReplies(t, tr, []want{ok("1"), ok("2"), ok("3"), ok("4"), ok("5"), ok("6"), ok("7"), ok("8"), ok("9"),
		upstreamFailed("10"), denied("11"), denied("12"), bad("13", "Authorization"), upstreamFailed("14"), ok("15"),
		ok("16"), ok("17"), bad("18", ""), upstreamFailed("19"), ok("20"), ok("21"), ok("22")})
	got := u.requests()
	sawToken := 0
	for _, s := range got {
		_, pass, _ := (&http.Request{Header: s.header}).BasicAuth()
		if s.header.Get("Authorization") == "Bearer "+tokValue || pass == tokValue || s.header.Get("X-Api-Key") == tokValue || queryOf(t, s.rawQuery).Get("api_key") == tokValue {
			sawToken++
		}
	}
	if len(got) != 11 || sawToken != 11 {
		t.Errorf("the upstream saw %d requests, %d of them with the credential; want 11 and 11", len(got), sawToken)
	}
}

// TestUseHostileUpstream: an upstream that names a response header after
// the credential, answers past its timeout, redirects on its origin to a
// path the service does not allow, or answers compressed though identity
// was asked for (scrub cannot see into it: upstream_failed, read); an
// action argument that matches its regexp on one line of several.
func TestUseHostileUpstream(t *testing.T) {
	const hexRef, hexValue = "arca://svc/hex", "0a1b2c3d4e5f60718293a4b5"
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/named":
			w.Header().Set("X-Echo-"+hexValue, "1")
			w.Header().Set("X-Key", hexValue)
		case "/slow":
			select {
			case <-hold:
			case <-r.Context().Done():
			}
		case "/admin-redirect":
			http.Redirect(w, r, "/admin", http.StatusFound)
		case "/admin":
			fmt.Fprint(w, "admin")
		case "/gzip", "/deflate": // whatever Accept-Encoding said, as some echo services do
			w.Header().Set("Content-Encoding", strings.TrimPrefix(r.URL.Path, "/"))
			zw := gzip.NewWriter(w)
			fmt.Fprintf(zw, "echo %s", r.Header.Get("X-Api-Key"))
			zw.Close()
		case "/identity":
			w.Header().Set("Content-Encoding", "identity")
			fmt.Fprintf(w, "echo %s", r.Header.Get("X-Api-Key"))
		}
	})
	svc := strings.Replace(u.service("hex", "header", `header = "X-Api-Key"`+"\ntimeout_ms = 200\nfollow_redirects = \"same-origin\""),
		`paths = ["/*"]`, `paths = ["/named", "/slow", "/admin-redirect", "/gzip", "/deflate", "/identity"]`, 1)
	svc = strings.Replace(svc, tokRef, hexRef, 1)
	f := useFixture(t, svc+fmt.Sprintf(`
[actions.touch]
argv = ["sh", "-c", 'touch "$0"', %q]
args = "^--dry-run$"
env = { TOKEN = %q }
`, filepath.Join(t.TempDir(), "started"), tokRef))
	svcOps := f.ops.NewService(t, opstest.Options{Now: fixedClock})
	if _, err := svcOps.Put(context.Background(), ops.Request{Ref: hexRef, Value: vault.NewSecret([]byte(hexValue))}); err != nil {
		t.Fatal(err)
	}
	svcOps.Close()
	tr := useSession(t, f, lines(
		`{"id":1,"op":"http","service":"hex","method":"GET","path":"/named"}`,
		`{"id":2,"op":"http","service":"hex","method":"GET","path":"/slow"}`,
		`{"id":3,"op":"http","service":"hex","method":"GET","path":"/admin-redirect"}`,
		`{"id":4,"op":"exec","action":"touch","args":["--dry-run\n--evil"]}`,
		`{"id":5,"op":"http","service":"hex","method":"GET","path":"/gzip"}`,
		`{"id":6,"op":"http","service":"hex","method":"GET","path":"/deflate"}`,
		`{"id":7,"op":"http","service":"hex","method":"GET","path":"/identity"}`,
	))
	checkReplies(t, tr, []want{ok("1"), upstreamFailed("2"), upstreamFailed("3"), bad("4", ""),
		upstreamFailed("5"), upstreamFailed("6"), ok("7")})
	if strings.Contains(string(tr.rawOut)+string(tr.rawErr), hexValue) {
		t.Errorf("the output holds the credential")
	}
	if len(tr.stdout) != 7 {
		t.FailNow()
	}
	for _, i := range []int{4, 5} {
		if c := causeOf(t, tr, i); c != "read" {
			t.Errorf("reply %d, an encoded answer: cause %q, want read", i+1, c)
		}
	}
	var identity httpResult
	result(t, tr, 6, &identity)
	if identity.Body != "echo <redacted:svc/hex>" {
		t.Errorf("identity: body %q", identity.Body)
	}
	var named httpResult
	result(t, tr, 0, &named)
	if v := named.Headers["X-Echo-<redacted:svc/hex>"]; len(v) != 1 || v[0] != "1" || len(named.Headers["X-Key"]) != 1 || named.Headers["X-Key"][0] != "<redacted:svc/hex>" {
		t.Errorf("headers %v: want the header named after the credential renamed, and the one that holds it redacted", named.Headers)
	}
	if c := causeOf(t, tr, 1); c != "timeout" {
		t.Errorf("slow: cause %q, want timeout", c)
	}
	if c := causeOf(t, tr, 2); c != "redirect" {
		t.Errorf("redirect to a path not allowed: cause %q, want redirect", c)
	}
	if slices.ContainsFunc(u.requests(), func(s seen) bool { return s.path == "/admin" }) {
		t.Errorf("the redirect to a path the service does not allow was followed")
	}
}

// TestUseFailuresCarryNoCredential: an exchange that fails (refused, an
// unknown authority, an upstream that answers its request line back as
// a malformed response, one that closes early) is upstream_failed with
// its cause, and its message and event hold nothing of the credential,
// which a query auth puts in the URL.
func TestUseFailuresCarryNoCredential(t *testing.T) {
	u := newUpstream(t, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var sawKey atomic.Int32 // requests that reached the raw server with the credential
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				line, _ := bufio.NewReader(conn).ReadString('\n')
				if strings.Contains(line, "api_key=") {
					sawKey.Add(1)
				}
				if strings.Contains(line, "/malformed") {
					fmt.Fprintf(conn, "HTTP/1.1 %s\r\nX: %s\r\n\r\n", line, line)
				}
			}()
		}
	}()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()
	svc := func(name, base, ca string) string {
		s := fmt.Sprintf("[services.%s]\nbase_url = %q\ncredential = %q\nauth = \"query\"\nquery_param = \"api_key\"\npaths = [\"/*\"]\nallow_private = true\n", name, base, tokRef)
		if ca != "" {
			s += fmt.Sprintf("tls_ca = %q\n", ca)
		}
		return s
	}
	f := useFixture(t, svc("refused", "http://"+closedAddr, "")+svc("raw", "http://"+ln.Addr().String(), "")+svc("noca", u.srv.URL, ""))
	tr := useSession(t, f, lines(
		`{"id":1,"op":"http","service":"refused","method":"GET","path":"/x"}`,
		`{"id":2,"op":"http","service":"raw","method":"GET","path":"/malformed"}`,
		`{"id":3,"op":"http","service":"raw","method":"GET","path":"/closed"}`,
		`{"id":4,"op":"http","service":"noca","method":"GET","path":"/x"}`,
	))
	checkReplies(t, tr, []want{upstreamFailed("1"), upstreamFailed("2"), upstreamFailed("3"), upstreamFailed("4")})
	for i, cause := range []string{"connect", "read", "read", "tls"} {
		if i < len(tr.stdout) && causeOf(t, tr, i) != cause {
			t.Errorf("reply %d: cause %q, want %s", i+1, causeOf(t, tr, i), cause)
		}
	}
	if strings.Contains(string(tr.rawOut)+string(tr.rawErr), "api_key") {
		t.Errorf("a failure tells the query")
	}
	if sawKey.Load() != 2 {
		t.Errorf("the raw server saw the credential in %d requests, want 2 (the positive control)", sawKey.Load())
	}
}

// TestUseRunMixed: uses among reads, a write, scrub and shutdown: a write
// behind held uses waits for them (a use behind it starts only after it),
// every reply comes in request order, and scrub afterwards knows the
// values the gets released.
func TestUseRunMixed(t *testing.T) {
	h := newHeldUpstream(t, 4)
	f := useFixture(t, h.service("api", "bearer", "")+`
[actions.echo]
argv = ["sh", "-c", 'printf "%s" "$TOKEN"']
env = { TOKEN = "`+tokRef+`" }
`)
	item := func(id int) string {
		return fmt.Sprintf(`{"id":%d,"op":"http","service":"api","method":"GET","path":"/item/%d"}`, id, id)
	}
	in := lines(item(1), item(2), item(3),
		`{"id":"get","op":"get","ref":"`+relRef+`"}`,
		`{"id":"put","op":"put","ref":"arca://app/new","value":"new-value-1234"}`,
		item(4),
		`{"id":"exec","op":"exec","action":"echo"}`,
		`{"id":"scrub","op":"scrub","text":"a `+relValue+` b"}`,
		`{"id":"shutdown","op":"shutdown"}`,
	)
	failed := make(chan string, 1)
	fail := func(msg string) {
		select {
		case failed <- msg:
		default: // one is enough
		}
	}
	f.spy.onCommit = func() {
		// The put commits only once the uses ahead of it are answered.
		select {
		case <-h.gates[1]:
		default:
			fail("the put committed while the uses ahead of it were held")
		}
	}
	go func() {
		var got []int
		for len(got) < 3 {
			i, ok := h.next()
			if !ok {
				fail("the three uses ahead of the put did not all reach the upstream")
				break
			}
			got = append(got, i)
		}
		for _, i := range []int{3, 2, 1} {
			h.release(i)
		}
		if i, ok := h.next(); !ok || i != 4 {
			fail("the use behind the put never reached the upstream")
		}
		h.release(4)
	}()
	tr := useSession(t, f, in)
	select {
	case msg := <-failed:
		t.Fatal(msg)
	default:
	}
	if n := f.spy.counted("commit"); n != 1 {
		t.Errorf("%d commits, want the put's", n)
	}
	checkReplies(t, tr, []want{ok("1"), ok("2"), ok("3"), ok(`"get"`), ok(`"put"`), ok("4"), ok(`"exec"`), ok(`"scrub"`), ok(`"shutdown"`)})
	var sc struct {
		Text string `json:"text"`
	}
	if len(tr.stdout) == 9 {
		result(t, tr, 7, &sc)
	}
	if sc.Text != "a <redacted:app/released> b" {
		t.Errorf("scrub: %q", sc.Text)
	}
}

// TestUseMadeIsAuditedWhenStdoutFails: a use that reached its upstream is
// audited even when its answer cannot be written: stdout fails at the
// first answer while four uses are in flight, and each of the four has
// its event.
func TestUseMadeIsAuditedWhenStdoutFails(t *testing.T) {
	const n = 4
	h := newHeldUpstream(t, n)
	f := useFixture(t, h.service("api", "bearer", `methods = ["POST"]`))
	var in []string
	for i := 1; i <= n; i++ {
		in = append(in, fmt.Sprintf(`{"id":%d,"op":"http","service":"api","method":"POST","path":"/item/%d"}`, i, i))
	}
	go func() {
		for range n {
			if _, ok := h.next(); !ok {
				break
			}
		}
		for i := 1; i <= n; i++ {
			h.release(i)
		}
	}()
	s := strings.Join(in, "\n") + "\n"
	tr := f.session(t, sessionOpts{stdin: strings.NewReader(s), sent: []byte(s), stdout: &failingWriter{}, broken: true})
	if tr.err == nil {
		t.Errorf("serve returned nil with a broken stdout")
	}
	if got := len(h.requests()); got != n {
		t.Fatalf("the upstream saw %d requests, want %d", got, n)
	}
	if es := useEvents(t, tr); len(es) != n {
		t.Errorf("%d use events for the %d uses made: a POST was made and not audited", len(es), n)
	}
}

// TestUseMadeIsAuditedWhenInterrupted: uses in flight when the session is
// interrupted are cut short and each has its event, before the stop
// event; the one in hand is answered, those behind it are not.
func TestUseMadeIsAuditedWhenInterrupted(t *testing.T) {
	const n = 3
	h := newHeldUpstream(t, n)
	t.Cleanup(func() {
		for i := 1; i <= n; i++ {
			h.release(i)
		}
	})
	f := useFixture(t, h.service("api", "bearer", ""))
	var in []string
	for i := 1; i <= n; i++ {
		in = append(in, fmt.Sprintf(`{"id":%d,"op":"http","service":"api","method":"GET","path":"/item/%d"}`, i, i))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for range n {
			if _, ok := h.next(); !ok {
				break
			}
		}
		cancel()
	}()
	s := strings.Join(in, "\n") + "\n"
	tr := f.session(t, sessionOpts{stdin: strings.NewReader(s), sent: []byte(s), ctx: ctx, broken: true})
	if tr.err == nil {
		t.Errorf("serve returned nil when interrupted")
	}
	checkReplies(t, tr, []want{{id: "1", code: "op_error"}})
	es := tr.events(t)
	if len(es) == 0 || es[len(es)-1].Event != "stop" {
		t.Fatalf("the last event is not stop")
	}
	if got := useEvents(t, tr); len(got) != n {
		t.Errorf("%d use events for the %d uses made", len(got), n)
	}
}

// TestUseEventsScrubCallerInput: what a use's event records of the
// request (its path; a refusal's message, which quotes the path or an
// argument) is scrubbed of the values the session released: a caller
// that puts a value it was given in a path or an argument does not get it
// onto the audit wire. The value is in the get's answer (the positive
// control), and on stderr nowhere.
func TestUseEventsScrubCallerInput(t *testing.T) {
	u := newUpstream(t, nil)
	svc := strings.Replace(u.service("api", "bearer", ""), `paths = ["/*"]`, `paths = ["/repos/*"]`, 1)
	act := "[actions.show]\nargv = [\"/bin/echo\"]\nargs = \"^--[a-z]+$\"\nenv = { TOKEN = \"" + tokRef + "\" }\n"
	f := useFixture(t, svc+act)
	tr := useSession(t, f, lines(
		`{"id":1,"op":"get","ref":"`+relRef+`"}`,
		`{"id":2,"op":"http","service":"api","method":"GET","path":"/admin/`+relValue+`"}`,
		`{"id":3,"op":"http","service":"api","method":"GET","path":"/repos/`+relValue+`"}`,
		`{"id":4,"op":"exec","action":"show","args":["`+relValue+`"]}`,
	))
	checkReplies(t, tr, []want{ok("1"), denied("2"), ok("3"), {id: "4", code: "bad_request"}})
	if !strings.Contains(string(tr.rawOut), relValue) {
		t.Fatal("control: the get's answer does not hold the value")
	}
	if strings.Contains(string(tr.rawErr), relValue) {
		t.Errorf("the audit wire holds the value a caller put in a path or an argument")
	}
	if n := strings.Count(string(tr.rawErr), "<redacted:"); n < 3 {
		t.Errorf("%d placeholders on the audit wire, want one for each of the three uses", n)
	}
}
