package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/internal/webpage"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/access"
)

func request(t *testing.T, f *fixture, method, path string, auth func(*http.Request)) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, f.http.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if auth != nil {
		auth(req)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

func bearer(tok string) func(*http.Request) {
	return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+tok) }
}

func cookie(tok string) func(*http.Request) {
	return func(r *http.Request) { r.AddCookie(&http.Cookie{Name: "arca_ui", Value: tok}) }
}

// The page and its assets hold no data: they are served without the token
// (the page takes it from the URL's fragment, which no server sees).
var publicPaths = []string{"/", "/assets/app.js", "/assets/trail.js", "/assets/app.css", "/assets/icon.svg"}

var endpoints = append(slices.Clone(publicPaths), "/api/envs", "/api/records?env=default", "/api/health?env=default", "/api/audit?env=default",
	"/api/record?env=default&ref=arca://app/db")

// Every endpoint of data wants the token in a bearer header: none, a wrong
// one, one off by a byte, the right one in a cookie or in the URL are
// refused (401, in JSON); the right one passes.
func TestTokenRequired(t *testing.T) {
	f := newFixture(t)
	for _, path := range append(slices.Clone(endpoints[len(publicPaths):]), "/nothing", "/assets/") {
		for name, auth := range map[string]func(*http.Request){
			"none": nil, "wrong bearer": bearer("nope"), "short bearer": bearer(testToken[:len(testToken)-1]),
			"the cookie of before": cookie(testToken), "basic": func(r *http.Request) { r.SetBasicAuth("u", testToken) },
			"bearer, two spaces": func(r *http.Request) { r.Header.Set("Authorization", "Bearer  "+testToken) },
		} {
			resp, body := request(t, f, "GET", path, auth)
			if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s with %s: %d, want 401", path, name, resp.StatusCode)
			}
			noCanary(t, path, body)
		}
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		if resp, _ := request(t, f, "GET", path+sep+"token="+testToken, nil); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s with the token in the query: %d, want 401", path, resp.StatusCode)
		}
		if !strings.HasPrefix(path, "/api/") {
			continue
		}
		if resp, body := request(t, f, "GET", path, bearer(testToken)); resp.StatusCode != http.StatusOK {
			t.Errorf("%s with the right bearer: %d %s", path, resp.StatusCode, body)
		}
		lower := func(r *http.Request) { r.Header.Set("Authorization", "bearer "+testToken) }
		if resp, body := request(t, f, "GET", path, lower); resp.StatusCode != http.StatusOK {
			t.Errorf("%s with the scheme in lower case: %d %s", path, resp.StatusCode, body)
		}
	}
	_, body := request(t, f, "GET", "/api/envs", nil)
	if !strings.Contains(string(body), `"error":"open the URL arca ui printed`) {
		t.Errorf("a 401 says: %s", body)
	}
	for _, path := range publicPaths {
		resp, body := request(t, f, "GET", path, nil)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s without the token: %d, want 200", path, resp.StatusCode)
		}
		noCanary(t, path, body)
		if strings.Contains(string(body), "arca://") || strings.Contains(string(body), testToken) {
			t.Errorf("%s holds data: %s", path, body)
		}
	}
}

// No answer sets a cookie, whatever the request: the token is never in a
// cookie, which a browser would send to every server on 127.0.0.1.
func TestNoCookie(t *testing.T) {
	f := newFixture(t)
	for _, path := range append(slices.Clone(endpoints), "/?token="+testToken, "/nothing", "/api/audit?limit=0") {
		for _, auth := range []func(*http.Request){nil, bearer(testToken), cookie(testToken)} {
			if resp, _ := request(t, f, "GET", path, auth); len(resp.Header.Values("Set-Cookie")) != 0 {
				t.Errorf("%s: Set-Cookie %q", path, resp.Header.Values("Set-Cookie"))
			}
		}
	}
}

// A token webpage.CheckToken refuses is refused when the server is made,
// and the error names the characters allowed, never the token.
func TestTokenChars(t *testing.T) {
	for _, tok := range []string{"", "semi;colon-0123456789", `quo"te-0123456789`, "eq=uals-in-the-middle", "===="} {
		_, err := New(Options{Token: tok})
		if err == nil {
			t.Errorf("%q: taken", tok)
			continue
		}
		if tok != "" && (!strings.Contains(err.Error(), webpage.TokenChars) || strings.Contains(err.Error(), tok)) {
			t.Errorf("%q: %v", tok, err)
		}
	}
}

// Only GET and HEAD; a request with a body, or an overlong query, is
// refused before anything runs. Every answer carries the strict CSP.
func TestRequestRules(t *testing.T) {
	f := newFixture(t)
	for _, m := range []string{"POST", "PUT", "DELETE", "PATCH", "OPTIONS"} {
		resp, _ := request(t, f, m, "/api/records", bearer(testToken))
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("%s: %d, Allow %q", m, resp.StatusCode, resp.Header.Get("Allow"))
		}
	}
	if resp, _ := request(t, f, "HEAD", "/api/envs", bearer(testToken)); resp.StatusCode != http.StatusOK {
		t.Errorf("HEAD: %d", resp.StatusCode)
	}
	if resp, body := request(t, f, "GET", "/api/records?env="+strings.Repeat("x", MaxQuery), bearer(testToken)); resp.StatusCode != http.StatusRequestURITooLong || !strings.Contains(string(body), `"error"`) {
		t.Errorf("an overlong query: %d %s", resp.StatusCode, body)
	}
	req, _ := http.NewRequest("GET", f.http.URL+"/api/envs", strings.NewReader("body"))
	req.Header.Set("Authorization", "Bearer "+testToken)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a GET with a body: %v, %v", resp, err)
	}
	for _, path := range endpoints {
		resp, _ := request(t, f, "GET", path, nil)
		if resp.Header.Get("Content-Security-Policy") != webpage.CSP || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: headers %v", path, resp.Header)
		}
	}
	if resp, body := request(t, f, "GET", "/nothing", bearer(testToken)); resp.StatusCode != http.StatusNotFound || resp.Header.Get("Content-Type") != "application/json" || !strings.Contains(string(body), `"error"`) {
		t.Errorf("an unknown path: %d %s", resp.StatusCode, body)
	}
	for q, want := range map[string]string{
		"/api/audit?until=2026-01-01T00:00:00Z&since=2026-02-01T00:00:00Z": `"until must be after since"`,
		"/api/audit?ref=a--b%5B": `ref \"a--b[\"`,
		"/api/audit?op=bogus":    `op \"bogus\" is no op or event`,
	} {
		if _, body := request(t, f, "GET", q, bearer(testToken)); !strings.Contains(string(body), want) || strings.Contains(string(body), `"--`) {
			t.Errorf("%s: %s, want %s and no flag's name", q, body, want)
		}
	}
	for _, q := range []string{"/api/audit?op=bogus", "/api/records?limit=0", "/api/records?limit=100000", "/api/records?offset=-1", "/api/audit?outcome=maybe", "/api/audit?since=yesterday", "/api/audit?ref=%5Bz-a%5D", "/api/records?env=nope",
		"/api/records?q=%5Ba", "/api/records?q=" + strings.Repeat("x", MaxMatch+1)} {
		if resp, body := request(t, f, "GET", q, bearer(testToken)); resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), `"error"`) {
			t.Errorf("%s: %d %s", q, resp.StatusCode, body)
		}
	}
}

// What each endpoint answers: the records' metadata (never a value), the
// vault's health, the trail's latest events, chart, denials with their
// verdicts and the chain's state. The list and check it ran are audited.
func TestEndpoints(t *testing.T) {
	f := newFixture(t)
	var recs struct {
		Total   int      `json:"total"`
		Records []record `json:"records"`
	}
	get(t, f, "/api/records?env=default", &recs)
	if recs.Total != 3 || len(recs.Records) != 3 || recs.Records[0].Ref != "arca://app/api-token" || recs.Records[1].Version != 2 ||
		recs.Records[1].RotatedAt == "" || recs.Records[1].SinceRotation < 47*3600 {
		t.Fatalf("records: %+v", recs)
	}
	var page struct{ Records []record }
	get(t, f, "/api/records?env=default&offset=9223372036854775807", &page)
	if len(page.Records) != 0 {
		t.Fatalf("records from past the end: %+v", page.Records)
	}
	get(t, f, "/api/records?env=default&offset=1&limit=1", &page)
	if len(page.Records) != 1 || page.Records[0].Ref != "arca://app/db" {
		t.Fatalf("records from 1, 1 of them: %+v", page.Records)
	}
	// A search: a substring of ns/name, or a glob; the total is what it picks.
	for q, want := range map[string][]string{"app/": {"arca://app/api-token", "arca://app/db"}, "b*": {"arca://billing/card"},
		"*d?": {"arca://app/db"}, "zzz": {}} {
		recs.Records = nil
		get(t, f, "/api/records?env=default&q="+url.QueryEscape(q), &recs)
		var got []string
		for _, r := range recs.Records {
			got = append(got, r.Ref)
		}
		if recs.Total != len(want) || strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("q=%s: total %d, %v; want %v", q, recs.Total, got, want)
		}
	}
	var h map[string]any
	get(t, f, "/api/health?env=default", &h)
	if h["healthy"] != true || h["records"] != float64(3) || h["versions"] != float64(3) || h["erased"] != float64(0) || h["kind"] != "file" {
		t.Fatalf("health: %v", h)
	}
	var tr struct {
		Events  []event  `json:"events"`
		Denied  []event  `json:"denied"`
		Chart   []bucket `json:"chart"`
		Chains  []chain  `json:"chains"`
		Matched int      `json:"matched"`
	}
	get(t, f, "/api/audit?env=default", &tr)
	ok, denied, errs := 0, 0, 0
	for _, b := range tr.Chart {
		ok, denied, errs = ok+b.OK, denied+b.Denied, errs+b.Error
	}
	if len(tr.Chart) != Buckets || ok < 4 || denied != 1 || errs != 1 || tr.Matched != ok+denied+errs {
		t.Fatalf("chart: %d ok, %d denied, %d error of %d matched", ok, denied, errs, tr.Matched)
	}
	if len(tr.Denied) != 1 || tr.Denied[0].Ref != "billing/card" || tr.Denied[0].Actor != "agent-7" || !strings.Contains(tr.Denied[0].Message, "payments service only") {
		t.Fatalf("denied: %+v", tr.Denied)
	}
	if len(tr.Chains) != 1 || !tr.Chains[0].OK || tr.Chains[0].Anchor == "" {
		t.Fatalf("chains: %+v", tr.Chains)
	}
	if last := tr.Events[0]; last.Seq < tr.Events[len(tr.Events)-1].Seq {
		t.Fatalf("events not newest first: %+v", tr.Events)
	}
	get(t, f, "/api/audit?outcome=denied", &tr)
	if tr.Matched != 1 || len(tr.Events) != 1 {
		t.Fatalf("outcome=denied: %d matched", tr.Matched)
	}
	// Every event of the fixture was written by ana on laptop.
	get(t, f, "/api/audit?user=ana&host=lap*", &tr)
	if tr.Matched == 0 || tr.Events[0].User != "ana" || tr.Events[0].Host != "laptop" {
		t.Fatalf("user=ana&host=lap*: %d matched: %+v", tr.Matched, tr.Events)
	}
	for _, q := range []string{"user=bob", "host=build-*"} {
		if get(t, f, "/api/audit?"+q, &tr); tr.Matched != 0 {
			t.Fatalf("%s: %d matched", q, tr.Matched)
		}
	}
	// Nothing matched: empty lists, never null (the page iterates them).
	_, body := request(t, f, "GET", "/api/audit?actor=nobody", bearer(testToken))
	if !strings.Contains(string(body), `"events":[]`) || !strings.Contains(string(body), `"denied":[]`) || !strings.Contains(string(body), `"chart":[]`) {
		t.Fatalf("nothing matched: %s", body)
	}
	trail := readFile(t, f.auditFile)
	if !strings.Contains(trail, `"event":"list","op":"list","outcome":"ok","env":"default"`) || !strings.Contains(trail, `"event":"check","op":"check"`) {
		t.Fatalf("the page's list and check are not audited:\n%s", trail)
	}
}

// No response holds a value, whatever is asked: every endpoint, with
// every filter, the assets, the errors.
func TestNoValueLeaves(t *testing.T) {
	f := newFixture(t)
	paths := append(endpoints, "/api/records?limit=1000", "/api/audit?limit=1000", "/api/audit?ref=*", "/api/records?env=nope", "/x", "/api/records/../../x")
	for _, p := range paths {
		_, body := request(t, f, "GET", p, bearer(testToken))
		noCanary(t, p, body)
	}
	noCanary(t, "the audit file", []byte(readFile(t, f.auditFile)))
}

// failRecorder is a testing.TB that keeps a failure instead of ending the
// test, to run a check against.
type failRecorder struct {
	testing.TB
	failure string
}

func (r *failRecorder) Helper() {}

func (r *failRecorder) Fatalf(format string, args ...any) { r.failure = fmt.Sprintf(format, args...) }

// TestNoCanaryCatchesALeak is noCanary's positive control: the values the
// fixture stores, read back through ops (the one path that reveals them)
// and answered as this package answers, in a JSON string, in a JSON []byte
// (base64, the value at offsets 0 and 4) and in the page's HTML, each trip
// the check; the same answer without the value does not. So
// TestNoValueLeaves and the browser test would see a value that left.
func TestNoCanaryCatchesALeak(t *testing.T) {
	f := newFixture(t)
	type leaky struct {
		Ref   string `json:"ref"`
		Value any    `json:"value,omitempty"`
	}
	answer := func(v any) []byte {
		w := httptest.NewRecorder()
		writeJSON(w, http.StatusOK, v)
		return w.Body.Bytes()
	}
	for _, ref := range []string{"arca://app/db", "arca://app/api-token"} {
		res, err := f.svc.Get(context.Background(), ops.Request{Ref: ref})
		if err != nil {
			t.Fatal(err)
		}
		v := res.Value.Reveal()
		for how, body := range map[string][]byte{
			"a string": answer(leaky{ref, string(v)}),
			"a []byte": answer(leaky{ref, v}),
			"the page": []byte(`<td class="value">` + html.EscapeString(string(v)) + `</td>`),
		} {
			r := &failRecorder{TB: t}
			noCanary(r, ref+" as "+how, body)
			if r.failure == "" {
				t.Errorf("noCanary passed %s, which holds %s's value: %s", how, ref, body)
			}
		}
		r := &failRecorder{TB: t}
		noCanary(r, ref+" without its value", answer(leaky{Ref: ref}))
		if r.failure != "" {
			t.Errorf("noCanary failed an answer without the value: %s", r.failure)
		}
	}
}

func get(t *testing.T, f *fixture, path string, v any) {
	t.Helper()
	resp, body := request(t, f, "GET", path, bearer(testToken))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %d %s", path, resp.StatusCode, body)
	}
	noCanary(t, path, body)
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// stubVaults answers as a shared vault would, to test what the page shows
// of one: its members and its recipients.
type stubVaults struct{ recipientsAsked int }

func (s *stubVaults) List(context.Context, ops.Request) (ops.ListResult, error) {
	return ops.ListResult{Env: "team", Records: []ops.ListRecord{}}, nil
}

func (s *stubVaults) Check(context.Context, ops.Request) (ops.CheckResult, error) {
	return ops.CheckResult{Env: "team", Vault: "team", Kind: ops.KindEtcd, Healthy: true, Problems: []string{}, Info: []string{"member 127.0.0.1:2379 answered"}}, nil
}

func (s *stubVaults) Recipients(_ context.Context, env string) (access.TeamResult, error) {
	s.recipientsAsked++
	return access.TeamResult{Env: env, Recipients: []string{"age1alice", "age1bob"}}, nil
}

func (s *stubVaults) History(_ context.Context, req ops.Request) (ops.HistoryResult, error) {
	return ops.HistoryResult{Env: "team", Ref: req.Ref}, nil
}

// For a shared vault the health answer carries its recipients; for a file
// vault it does not ask.
func TestHealthOfASharedVault(t *testing.T) {
	v := &stubVaults{}
	s, err := New(Options{Token: testToken, Vaults: v, Envs: []string{"team"}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL+"/api/health?env=team", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var h struct {
		Kind       string   `json:"kind"`
		Info       []string `json:"info"`
		Recipients []string `json:"recipients"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatal(err)
	}
	if h.Kind != string(ops.KindEtcd) || len(h.Recipients) != 2 || h.Recipients[1] != "age1bob" || len(h.Info) != 1 || v.recipientsAsked != 1 {
		t.Fatalf("health: %+v, recipients asked %d times", h, v.recipientsAsked)
	}
	f := newFixture(t)
	var fh map[string]any
	get(t, f, "/api/health?env=default", &fh)
	if _, ok := fh["recipients"]; ok {
		t.Fatalf("a file vault's health lists recipients: %v", fh)
	}
}
