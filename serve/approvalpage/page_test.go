package approvalpage

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/internal/webpage"
)

const grant3 = `{"decision":"grant","scope":{"uses":3,"ttl_s":0}}`

// The URL alone shows and approves nothing: without the token, or with
// another, or with it anywhere but the bearer header, reading an approval
// or the list is 401 (a browser's navigation gets the page that asks for
// the token, and no data), and so is a decision, which is not taken.
func TestUnauthorized(t *testing.T) {
	f := newFixture(t)
	for _, path := range []string{"/approvals/" + idPending, "/approvals/", "/approvals/" + idUnknown, "/approvals/" + idPending + "?token=" + testToken} {
		for name, auth := range map[string]string{
			"no token": "", "another token": "Bearer approver-token-0123456789abcdeX", "the token as Basic": "Basic " + testToken,
			"the token alone": testToken, "an empty bearer": "Bearer ", "a token that begins it": "Bearer " + testToken[:20],
		} {
			hdr := map[string]string{"Authorization": auth}
			resp, body := f.do(t, req{method: "GET", path: path, header: hdr})
			if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" {
				t.Errorf("GET %s, %s: %d %v", path, name, resp.StatusCode, resp.Header)
			}
			if strings.Contains(body, "agent-7") || strings.Contains(body, "csrf") {
				t.Errorf("GET %s, %s: data in a 401: %s", path, name, body)
			}
			wantShell := auth == ""
			if shell := strings.Contains(body, `<script src="/assets/approvals.js"`); shell != wantShell {
				t.Errorf("GET %s, %s: the page that asks for the token: %v, want %v: %s", path, name, shell, wantShell, body)
			}
			resp, body = f.do(t, req{method: "POST", path: path, header: hdr, body: grant3})
			if resp.StatusCode != http.StatusUnauthorized && !(path == "/approvals/" && resp.StatusCode == http.StatusMethodNotAllowed) {
				t.Errorf("POST %s, %s: %d %s", path, name, resp.StatusCode, body)
			}
		}
	}
	f.noDecision(t, "without the token")
	if s := f.store.state(idPending); s != "pending" {
		t.Errorf("the approval is %s", s)
	}
}

// A decision with the token but without this page's Origin, or without
// its CSRF token, is 403 and not taken.
func TestForbidden(t *testing.T) {
	f := newFixture(t)
	for name, hdr := range map[string]map[string]string{
		"no CSRF token":             {CSRFHeader: ""},
		"another CSRF token":        {CSRFHeader: strings.Repeat("0", 64)},
		"the CSRF token, cut short": {CSRFHeader: f.srv.csrf(testToken)[:63]},
		"the bearer token as CSRF":  {CSRFHeader: testToken},
		"another token's CSRF":      {CSRFHeader: f.srv.csrf("approver-token-0123456789abcdeX")},
		"no Origin":                 {"Origin": ""},
		"another site's Origin":     {"Origin": "http://evil.example"},
		"another port's Origin":     {"Origin": f.base + "1"},
		"an opaque Origin":          {"Origin": "null"},
		"an https Origin":           {"Origin": strings.Replace(f.base, "http:", "https:", 1)},
	} {
		resp, body := f.do(t, req{method: "POST", path: "/approvals/" + idPending, header: hdr, body: grant3})
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, `"error"`) {
			t.Errorf("%s: %d %s", name, resp.StatusCode, body)
		}
	}
	f.noDecision(t, "forbidden")
	// Positive control: the same request with both is taken.
	if resp, body := f.do(t, req{method: "POST", path: "/approvals/" + idPending, body: grant3}); resp.StatusCode != http.StatusOK {
		t.Fatalf("a good decision: %d %s", resp.StatusCode, body)
	}
	if d := f.took(t); d != (decided{idPending, Decision{Grant: true, Scope: Scope{Uses: 3}}}) {
		t.Errorf("decided %+v", d)
	}
}

// A Host that is not a loopback name of this server's port (a name an
// attacker rebound to 127.0.0.1) is refused before anything else.
func TestHost(t *testing.T) {
	f := newFixture(t)
	_, port, _ := strings.Cut(strings.TrimPrefix(f.base, "http://"), ":")
	for _, host := range []string{"evil.example:" + port, "evil.example", "127.0.0.1:1", "localhost.evil.example:" + port} {
		resp, body := f.do(t, req{method: "GET", path: "/approvals/" + idPending, header: map[string]string{"Host": host}})
		if resp.StatusCode != http.StatusMisdirectedRequest || strings.Contains(body, "agent-7") {
			t.Errorf("Host %s: %d %s", host, resp.StatusCode, body)
		}
	}
	for _, host := range []string{"localhost:" + port, "127.0.0.1:" + port} {
		if resp, body := f.do(t, req{method: "GET", path: "/approvals/" + idPending, header: map[string]string{"Host": host}}); resp.StatusCode != http.StatusOK {
			t.Errorf("Host %s: %d %s", host, resp.StatusCode, body)
		}
	}
}

// With the token: an approval's data (as JSON, its untrusted text escaped
// for HTML too), the pending list, and a decision taken once: the second
// is 409, as is one on an expired approval, and the store's refusal is
// passed on.
func TestDecide(t *testing.T) {
	f := newFixture(t)
	if !regexp.MustCompile(`^http://127\.0\.0\.1:[0-9]+/approvals/` + idPending + `$`).MatchString(f.srv.URL(idPending)) {
		t.Errorf("URL: %s", f.srv.URL(idPending))
	}
	resp, body := f.do(t, req{method: "GET", path: "/approvals/" + idPending})
	var one struct {
		Approval viewJSON `json:"approval"`
		CSRF     string   `json:"csrf"`
	}
	if err := json.Unmarshal([]byte(body), &one); err != nil || resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET: %d %v %s", resp.StatusCode, err, body)
	}
	want := wire(f.store.views[idPending])
	if one.Approval != want || one.CSRF != f.srv.csrf(testToken) || strings.Contains(body, "<") {
		t.Errorf("GET: %s", body)
	}
	var list struct{ Approvals []viewJSON }
	_, body = f.do(t, req{method: "GET", path: "/approvals/"})
	if err := json.Unmarshal([]byte(body), &list); err != nil || len(list.Approvals) != 3 || list.Approvals[1].ID != idOther {
		t.Errorf("the list: %v %s", err, body)
	}

	resp, body = f.do(t, req{method: "POST", path: "/approvals/" + idOther, body: `{"decision":"deny"}`})
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"state":"denied"`) {
		t.Errorf("deny: %d %s", resp.StatusCode, body)
	}
	if d := f.took(t); d != (decided{idOther, Decision{}}) {
		t.Errorf("deny: decided %+v", d)
	}
	for _, tc := range []struct{ id, says string }{
		{idOther, "already denied"},
		{idExpired, "expired"},
		{idRefused, `the approval \u003cb\u003eexpired\u003c/b\u003e while you read it`},
	} {
		resp, body := f.do(t, req{method: "POST", path: "/approvals/" + tc.id, body: grant3})
		if resp.StatusCode != http.StatusConflict || !strings.Contains(body, tc.says) {
			t.Errorf("%s: %d %s", tc.id, resp.StatusCode, body)
		}
	}
	if d := f.took(t); d != (decided{idRefused, Decision{Grant: true, Scope: Scope{Uses: 3}}}) {
		t.Errorf("the refused one: %+v", d)
	}
	f.noDecision(t, "409")
	for _, path := range []string{"/approvals/" + idUnknown, "/approvals/ap_1", "/approvals/AP_00000000000000000000000000000001", "/nothing", "/assets/", "/assets/nothing.js"} {
		if resp, body := f.do(t, req{method: "GET", path: path}); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d %s", path, resp.StatusCode, body)
		}
	}
	if resp, body := f.do(t, req{method: "POST", path: "/approvals/" + idUnknown, body: grant3}); resp.StatusCode != http.StatusNotFound {
		t.Errorf("POST unknown: %d %s", resp.StatusCode, body)
	}
}

// A method a path does not take is 405 with Allow.
func TestMethods(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct{ method, path, allow string }{
		{"PUT", "/approvals/" + idPending, "GET, HEAD, POST"},
		{"DELETE", "/approvals/" + idPending, "GET, HEAD, POST"},
		{"POST", "/approvals/", "GET, HEAD"},
		{"POST", "/assets/approvals.js", "GET, HEAD"},
		{"OPTIONS", "/approvals/" + idPending, "GET, HEAD, POST"},
	} {
		resp, _ := f.do(t, req{method: tc.method, path: tc.path, body: grant3})
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != tc.allow {
			t.Errorf("%s %s: %d, Allow %q", tc.method, tc.path, resp.StatusCode, resp.Header.Get("Allow"))
		}
	}
	f.noDecision(t, "405")
}

// A decision's body is JSON of the page's, exactly, and bounded.
func TestBody(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		name, body, ctype string
		status            int
	}{
		{"too long", `{"decision":"deny"` + strings.Repeat(" ", MaxBody) + `}`, "", http.StatusRequestEntityTooLarge},
		{"not JSON", `decision=grant`, "", http.StatusBadRequest},
		{"empty", ``, "", http.StatusBadRequest},
		{"an unknown field", `{"decision":"deny","approver":"me"}`, "", http.StatusBadRequest},
		{"an unknown field in scope", `{"decision":"grant","scope":{"uses":3,"ttl":5}}`, "", http.StatusBadRequest},
		{"a key twice", `{"decision":"grant","decision":"deny"}`, "", http.StatusBadRequest},
		{"a key in another case", `{"Decision":"deny"}`, "", http.StatusBadRequest},
		{"more after it", grant3 + `{}`, "", http.StatusBadRequest},
		{"an array", `[` + grant3 + `]`, "", http.StatusBadRequest},
		{"another decision", `{"decision":"maybe"}`, "", http.StatusBadRequest},
		{"a grant without scope", `{"decision":"grant"}`, "", http.StatusBadRequest},
		{"a deny with scope", `{"decision":"deny","scope":{"uses":1,"ttl_s":0}}`, "", http.StatusBadRequest},
		{"too many uses", `{"decision":"grant","scope":{"uses":10001,"ttl_s":0}}`, "", http.StatusBadRequest},
		{"negative uses", `{"decision":"grant","scope":{"uses":-1,"ttl_s":0}}`, "", http.StatusBadRequest},
		{"too long a ttl", `{"decision":"grant","scope":{"uses":0,"ttl_s":86401}}`, "", http.StatusBadRequest},
		{"a fraction", `{"decision":"grant","scope":{"uses":1.5,"ttl_s":0}}`, "", http.StatusBadRequest},
		{"a form", `decision=grant`, "application/x-www-form-urlencoded", http.StatusUnsupportedMediaType},
		{"plain text", grant3, "text/plain", http.StatusUnsupportedMediaType},
		{"no type", grant3, "-", http.StatusUnsupportedMediaType},
	} {
		hdr := map[string]string{}
		if tc.ctype == "-" {
			hdr["Content-Type"] = ""
		} else if tc.ctype != "" {
			hdr["Content-Type"] = tc.ctype
		}
		resp, body := f.do(t, req{method: "POST", path: "/approvals/" + idPending, header: hdr, body: tc.body})
		if resp.StatusCode != tc.status || !strings.Contains(body, `"error"`) {
			t.Errorf("%s: %d %s", tc.name, resp.StatusCode, body)
		}
	}
	f.noDecision(t, "a bad body")
	// At the bounds, taken.
	for _, tc := range []struct {
		id, body string
		want     Scope
	}{
		{idPending, `{"scope":{"ttl_s":86400,"uses":10000},"decision":"grant"}`, Scope{Uses: 10000, TTLSeconds: 86400}},
		{idOther, `{"decision":"grant","scope":{"uses":0,"ttl_s":0}}` + strings.Repeat(" ", MaxBody-51), Scope{}},
	} {
		if resp, body := f.do(t, req{method: "POST", path: "/approvals/" + tc.id, header: map[string]string{"Content-Type": "application/json; charset=utf-8"}, body: tc.body}); resp.StatusCode != http.StatusOK {
			t.Errorf("%s: %d %s", tc.body, resp.StatusCode, body)
		}
		if d := f.took(t); d != (decided{tc.id, Decision{Grant: true, Scope: tc.want}}) {
			t.Errorf("decided %+v", d)
		}
	}
}

// Every answer carries the pages' headers, and none sets a cookie.
func TestHeaders(t *testing.T) {
	f := newFixture(t)
	for _, r := range []req{
		{method: "GET", path: "/approvals/" + idPending, header: map[string]string{"Authorization": ""}},
		{method: "GET", path: "/approvals/" + idPending, header: map[string]string{"Authorization": "Bearer nope"}},
		{method: "GET", path: "/approvals/" + idPending},
		{method: "GET", path: "/approvals/"},
		{method: "GET", path: "/approvals/" + idUnknown},
		{method: "GET", path: "/nothing"},
		{method: "GET", path: "/"},
		{method: "GET", path: "/assets/approvals.js"},
		{method: "GET", path: "/assets/approvals.css"},
		{method: "HEAD", path: "/approvals/" + idPending},
		{method: "PUT", path: "/approvals/" + idPending},
		{method: "POST", path: "/approvals/" + idPending, header: map[string]string{"Origin": ""}, body: grant3},
		{method: "POST", path: "/approvals/" + idPending, header: map[string]string{"Authorization": ""}, body: grant3},
		{method: "POST", path: "/approvals/" + idPending, body: "{"},
		{method: "GET", path: "/approvals/", header: map[string]string{"Host": "evil.example"}},
	} {
		resp, _ := f.do(t, r)
		for k, v := range map[string]string{
			"Content-Security-Policy": webpage.CSP, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
			"Cache-Control": "no-store", "Cross-Origin-Resource-Policy": "same-origin",
		} {
			if got := resp.Header.Get(k); got != v {
				t.Errorf("%s %s (%d): %s %q", r.method, r.path, resp.StatusCode, k, got)
			}
		}
		if c := resp.Header.Values("Set-Cookie"); len(c) != 0 {
			t.Errorf("%s %s: Set-Cookie %q", r.method, r.path, c)
		}
	}
}

// Start refuses a Listen that is not loopback, and a token the rules
// refuse; it takes every loopback form.
func TestStartRefuses(t *testing.T) {
	store := newStore()
	for _, listen := range []string{"0.0.0.0:0", "192.168.1.2:80", "example.com:80", ":0", "[::]:0", "127.0.0.1", "localhost.:0", "[fe80::1%lo]:0"} {
		if s, err := Start(Options{Listen: listen, Token: testToken, Store: store}); err == nil {
			s.Close()
			t.Errorf("%s: taken", listen)
		}
	}
	for _, tok := range []string{"", "short-token", "approver token 0123456789", "approver-token-0123456789é"} {
		s, err := Start(Options{Listen: "127.0.0.1:0", Token: tok, Store: store})
		if err == nil {
			s.Close()
			t.Errorf("token %q: taken", tok)
		} else if tok != "" && strings.Contains(err.Error(), tok) {
			t.Errorf("the error holds the token: %v", err)
		}
	}
	if _, err := Start(Options{Listen: "127.0.0.1:0", Token: testToken}); err == nil {
		t.Error("no store: taken")
	}
	for _, listen := range []string{"127.0.0.1:0", "localhost:0", "[::1]:0"} {
		s, err := Start(Options{Listen: listen, Token: testToken, Store: store})
		if err != nil {
			t.Errorf("%s: %v", listen, err)
			continue
		}
		resp, err := http.Get(s.URL(idPending))
		if err != nil || resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: %s: %v %v", listen, s.URL(idPending), resp, err)
		} else {
			resp.Body.Close()
		}
		if err := s.Close(); err != nil {
			t.Errorf("%s: close: %v", listen, err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("%s: a second close: %v", listen, err)
		}
	}
}
