package ops

import (
	"strings"
	"testing"

	"github.com/arca-secrets/arca/manifest"
)

// TestObligationDenialTable: every obligation the manifest lists as
// supported has its enforcement (one the list names and the code does not
// enforce would deny every use); any other arca: obligation denies every
// op.
func TestObligationDenialTable(t *testing.T) {
	for _, ob := range manifest.Obligations() {
		if ob == manifest.ObligationApproval { // a deny's: on an allow, it denies
			continue
		}
		if ob != manifest.NoReveal { // arca:ttl=S and arca:max_uses=N take a value
			ob += "=1"
		}
		for _, op := range []string{"http", "exec", "put", "list"} {
			if _, why := obligationDenial(op, []string{ob}); why != "" {
				t.Errorf("%s under supported %s: denied %q", op, ob, why)
			}
		}
	}
	for _, c := range []struct {
		op          string
		obligations []string
		want        string
	}{
		{"get", nil, ""},
		{"get", []string{"log-access", "ARCA:no_reveal", "arca-ttl=5"}, ""},
		{"get", []string{"arca:no_reveal"}, "cannot reveal: arca:no_reveal"},
		{"exec", []string{"arca:no_reveal", "arca:ttl=60"}, ""},
		{"exec", []string{"arca:no_reveal", "arca:ttl=0"}, `cannot fulfil obligation "arca:ttl=0"`},
		{"get", []string{"arca:no_reveal=1"}, `cannot fulfil obligation "arca:no_reveal=1"`},
		{"get", []string{"arca:no_reveal", "arca:bogus"}, `cannot fulfil obligation "arca:bogus"`},
		{"http", []string{"arca:max_uses=x"}, `cannot fulfil obligation "arca:max_uses=x"`},
		{"list", []string{"arca:approval"}, `cannot fulfil obligation "arca:approval" on an allow (send it with a deny)`},
		{"put", []string{"arca:approval=1"}, `cannot fulfil obligation "arca:approval=1"`},
		{"get", []string{"arca:no_reveal "}, `cannot fulfil obligation "arca:no_reveal "`},
		{"get", []string{"arca:\u202e\x00"}, `cannot fulfil obligation "arca:\u202e\x00"`},
		{"get", []string{"arca:" + strings.Repeat("x", 200)}, `cannot fulfil obligation "arca:` + strings.Repeat("x", 123) + `"…`},
	} {
		if _, got := obligationDenial(c.op, c.obligations); got != c.want {
			t.Errorf("%s %q: %q, want %q", c.op, c.obligations, got, c.want)
		}
	}
}
