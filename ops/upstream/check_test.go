package upstream

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/ops/config"
)

// checkService allows GET and POST on /repos/* and on /admin itself, so
// that a spelling denied below is denied for its form, not for missing
// every glob.
func checkService(t *testing.T, auth string) *Service {
	t.Helper()
	return newService(t, config.Service{
		BaseURL: "https://api.example.com/v3/", Auth: auth, Header: "X-Api-Key", QueryParam: "api_key",
		Methods: []string{"GET", "POST"}, Paths: []string{"/repos/*", "/admin", "/"},
	})
}

// TestCheckPaths: each way to reach another path than the one the globs
// allowed is a named row; a trailing slash is denied as path.Clean would
// remove it (only "/" itself ends in one).
func TestCheckPaths(t *testing.T) {
	s := checkService(t, "bearer")
	for _, tc := range []struct {
		name, path string
		want       Kind // "" allowed
		clean      string
	}{
		{"plain", "/repos/arca", "", "/repos/arca"},
		{"root", "/", "", "/"},
		{"encoded space decoded once", "/repos/a%20b", "", "/repos/a b"},
		{"double encoding stays one level", "/repos/%252e%252e", "", "/repos/%2e%2e"},
		{"dot-dot", "/repos/../admin", Denied, ""},
		{"scheme-relative", "//evil.example/x", Denied, ""},
		{"encoded dot-dot", "/%2e%2e/", Denied, ""},
		{"encoded slash", "/repos/%2F..", Denied, ""},
		{"encoded slash lower", "/repos/a%2fb", Denied, ""},
		{"encoded dot-dot segment", "/repos/%2e%2e/admin", Denied, ""},
		{"half encoded dot-dot", "/repos/.%2e/x", Denied, ""},
		{"dot segment", "/./admin", Denied, ""},
		{"trailing slash", "/repos/x/", Denied, ""},
		{"trailing dot", "/repos/x/.", Denied, ""},
		{"backslash", `/repos\..\admin`, Denied, ""},
		{"encoded backslash", "/repos/%5C..", Denied, ""},
		{"dot-dot inside a name", "/repos/a..b", Denied, ""},
		{"no glob", "/user", Denied, ""},
		{"glob needs more", "/repos", Denied, ""},
		{"relative", "repos/x", BadRequest, ""},
		{"empty", "", BadRequest, ""},
		{"NUL", "/repos/a\x00", BadRequest, ""},
		{"encoded NUL", "/repos/a%00", BadRequest, ""},
		{"newline", "/repos/a\nb", BadRequest, ""},
		{"encoded newline", "/repos/a%0d%0aHost:x", BadRequest, ""},
		{"query in path", "/repos/a?x=1", BadRequest, ""},
		{"fragment", "/repos/a#x", BadRequest, ""},
		{"bad escape", "/repos/%zz", BadRequest, ""},
		{"invalid UTF-8", "/repos/%ff", BadRequest, ""},
	} {
		clean, err := s.Check(Call{Method: "GET", Path: tc.path})
		if got := kindOf(err); got != tc.want || clean != tc.clean {
			t.Errorf("%s: Check(%q) = %q, %v (%s); want %q, %q", tc.name, tc.path, clean, err, got, tc.clean, tc.want)
		}
	}
}

// TestCheckHeadersAndQuery: a header that carries credentials or routing,
// or belongs to the connection, is a bad request in any case, and so is
// the auth query parameter, an invalid header and a call past its bounds;
// a method not listed is denied.
func TestCheckHeadersAndQuery(t *testing.T) {
	refused := []string{"Authorization", "authorization", "Proxy-Authorization", "Cookie", "Host",
		"Proxy-Connection", "proxy-anything", "Connection", "Keep-Alive", "TE", "Trailer",
		"Transfer-Encoding", "Upgrade", "Content-Length",
		"X-HTTP-Method-Override", "X-Http-Method", "X-Method-Override", "X-Original-URL", "X-Rewrite-URL",
		"Forwarded", "X-Forwarded-Host", "x-forwarded-for", "X-Forwarded-Proto", "X-Forwarded-Prefix"}
	for _, auth := range []string{"bearer", "header"} {
		s := checkService(t, auth)
		names := refused
		if auth == "header" {
			names = append(names, "X-Api-Key", "x-api-key")
		}
		for _, k := range names {
			_, err := s.Check(Call{Method: "GET", Path: "/", Header: http.Header{k: {"v"}}})
			if kindOf(err) != BadRequest || !strings.Contains(err.Error(), http.CanonicalHeaderKey(k)) {
				t.Errorf("auth %s, header %s: %v; want bad_request naming it", auth, k, err)
			}
		}
	}
	s := checkService(t, "query")
	many := http.Header{}
	for i := range maxHeaders + 1 {
		many.Set(fmt.Sprintf("X-H%d", i), "v")
	}
	manyQ := url.Values{}
	for i := range maxQueryKeys + 1 {
		manyQ.Set(fmt.Sprintf("q%d", i), "v")
	}
	for name, c := range map[string]Call{
		"auth query param":    {Query: url.Values{"api_key": {"x"}}},
		"auth query any case": {Query: url.Values{"API_KEY": {"x"}}},
		"header name":         {Header: http.Header{"Bad Name": {"v"}}},
		"header value CRLF":   {Header: http.Header{"X-A": {"v\r\nHost: evil"}}},
		"header value NUL":    {Header: http.Header{"X-A": {"v\x00"}}},
		"too many headers":    {Header: many},
		"header bytes":        {Header: http.Header{"X-A": {strings.Repeat("v", maxHeaderBytes)}}},
		"too many query keys": {Query: manyQ},
	} {
		c.Method, c.Path = "GET", "/"
		if _, err := s.Check(c); kindOf(err) != BadRequest {
			t.Errorf("%s: %v; want bad_request", name, err)
		}
	}
	for _, m := range []string{"DELETE", "get", "PUT", ""} {
		if _, err := s.Check(Call{Method: m, Path: "/"}); kindOf(err) != Denied {
			t.Errorf("method %q: %v; want denied", m, err)
		}
	}
	if _, err := s.Check(Call{Method: "POST", Path: "/repos/x", Query: url.Values{"key": {"x"}},
		Header: http.Header{"Accept": {"application/json"}, "X-Trace": {"a\tb"}}}); err != nil {
		t.Errorf("a plain call: %v", err)
	}
}

// kindOf is the Kind of a Refusal, "" for nil, "other" for anything else.
func kindOf(err error) Kind {
	var r *Refusal
	switch {
	case err == nil:
		return ""
	case errors.As(err, &r):
		return r.Kind
	}
	return "other"
}

// FuzzCheckPath: whatever path Check allows is absolute, decodes once to
// the clean path it returns, holds no "..", "//", "\" or control
// character, and is what path.Clean makes of it.
func FuzzCheckPath(f *testing.F) {
	for _, p := range []string{"/repos/x", "/repos/../admin", "//evil.example/x", "/%2e%2e/", "/repos/%2F..",
		"/repos/.%2e/x", "/./admin", "/repos/x/", "/repos/%252e", "/repos/a%20b", "/"} {
		f.Add(p)
	}
	s, err := New("svc", config.Service{BaseURL: "https://api.example.com", Auth: "bearer", Paths: []string{"*"}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		clean, err := s.Check(Call{Method: "GET", Path: raw})
		if err != nil {
			if kindOf(err) == "other" {
				t.Fatalf("%q: %v, not a Refusal", raw, err)
			}
			return
		}
		dec, derr := url.PathUnescape(raw)
		if derr != nil || dec != clean || !strings.HasPrefix(clean, "/") || path.Clean(clean) != clean ||
			strings.Contains(clean, "..") || strings.Contains(clean, "//") || strings.ContainsAny(clean, "\\\x00\r\n") {
			t.Fatalf("%q allowed as %q", raw, clean)
		}
	})
}
