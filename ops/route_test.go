package ops

import (
	"errors"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops/ref"
)

// Every ref package failure reaches callers of ops as bad_request, with
// the ref package's message.
func TestParseRefIsBadRequest(t *testing.T) {
	for _, in := range []string{"", "ARCA://a/b", "arca://a", "arca://a//b", "arca://../b", "arca://a/b\n",
		"arca://a/" + strings.Repeat("b", manifest.MaxRef)} {
		_, want := ref.Parse(in)
		got, err := ParseRef(in)
		var e *Error
		if !errors.As(err, &e) || e.Code != manifest.BadRequest {
			t.Fatalf("ParseRef(%q): err = %#v, want *Error with code bad_request", in, err)
		}
		if want == nil || e.Msg != want.Error() || got != (ref.Ref{}) {
			t.Fatalf("ParseRef(%q) = %+v, %q; want the zero Ref and %v", in, got, e.Msg, want)
		}
	}
	got, err := ParseRef("arca://prod/billing/key")
	if err != nil || got.Env != "prod" || got.Path() != "billing/key" || got.Canonical() != "arca://billing/key" {
		t.Fatalf("ParseRef = %+v, %v", got, err)
	}
}
