package ops

import (
	"net/http"
	"slices"
	"testing"

	"github.com/arca-secrets/arca/internal/scrub"
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
