package ops

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/internal/scrub"
	"github.com/arca-secrets/arca/ops/ref"
	"github.com/arca-secrets/arca/ops/upstream"
	"github.com/arca-secrets/arca/vault"
)

// TestScrubHeader: header values are scrubbed each in place, in one pass
// of the engine; a value that spans two header values (a multi-line
// secret whose lines the upstream put in two headers) still leaves
// neither part, and Content-Length is dropped.
func TestScrubHeader(t *testing.T) {
	set := scrub.NewSet()
	const tok = "tok-canary-0123456789abcdef"
	const two = "first-line-of-it\nsecond-line-of-it"
	for l, v := range map[string]string{"ci/token": tok, "ci/pem": two} {
		if err := set.Add(l, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	h := http.Header{
		"Content-Length": {"12"},
		"X-Echo":         {"Bearer " + tok, "plain"},
		"X-A":            {"first-line-of-it"},
		"X-B":            {"second-line-of-it"},
		"Date":           {"Sun, 06 Dec 2026 11:31:28 GMT"},
	}
	var rs redactions
	got := scrubHeader([]*scrub.Set{set}, h, &rs)
	want := http.Header{
		"X-Echo": {"Bearer <redacted:ci/token>", "plain"},
		"X-A":    {"<redacted:ci/pem>"},
		"X-B":    {"<redacted:ci/pem>"},
		"Date":   {"Sun, 06 Dec 2026 11:31:28 GMT"},
	}
	for k, v := range want {
		if !slices.Equal(got[k], v) {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("headers %v, want only %v", got, want)
	}
	if rs.total() != 3 {
		t.Errorf("redactions %v, want 3", rs)
	}
}

// TestScrubHeaderNameInAnyCase: a header named after the credential is
// renamed though net/http changed the case of the name the upstream sent
// (X-Echo-tok-CANARY became X-Echo-Tok-Canary); a header that holds it is
// redacted as ever.
func TestScrubHeaderNameInAnyCase(t *testing.T) {
	const cred = "tok-CANARY-mixedCase-0123"
	r, err := ref.Parse("arca://t/cred")
	if err != nil {
		t.Fatal(err)
	}
	res := &HTTPResult{use: &audit.Use{}, creds: []used{{useCred: useCred{slot: "secret", ref: r}, value: vault.NewSecret([]byte(cred))}},
		raw: &upstream.Response{Header: http.Header{
			http.CanonicalHeaderKey("X-Echo-" + cred): {"1"},
			"X-Key": {cred},
		}}}
	res.scrub(nil)
	for k, vs := range res.Header {
		if strings.Contains(strings.ToLower(k+strings.Join(vs, "")), strings.ToLower(cred)) {
			t.Errorf("header %q holds the credential in some case", k)
		}
	}
	if v := res.Header["X-Echo-<redacted:t/cred>"]; len(v) != 1 || v[0] != "1" || res.Header.Get("X-Key") != "<redacted:t/cred>" {
		t.Errorf("headers %v: want the one named after the credential renamed, the one that holds it redacted", res.Header)
	}
	if res.use.Redactions != 2 {
		t.Errorf("redactions %d, want 2", res.use.Redactions)
	}
}
