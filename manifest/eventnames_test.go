package manifest

import (
	"slices"
	"strings"
	"testing"
)

// --op picks by an op or an event arca writes: each op of the table and
// each event that has none is one; anything else is refused, naming them.
func TestCheckEventName(t *testing.T) {
	names := EventNames()
	for _, op := range Ops() {
		if !slices.Contains(names, op.Name) {
			t.Errorf("EventNames lacks the op %q", op.Name)
		}
	}
	for _, ev := range []string{"", "start", "stop", "warning", "grant.open", "approval.request", "request.ask", "rekey"} {
		if err := CheckEventName(ev); err != nil {
			t.Errorf("%q: %v", ev, err)
		}
	}
	for _, bad := range []string{"bogus", "GET", "get ", "\x1b[2J"} {
		err := CheckEventName(bad)
		if err == nil || !strings.Contains(err.Error(), "is no op or event arca writes (get, put, ") || strings.ContainsRune(err.Error(), 0x1b) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
