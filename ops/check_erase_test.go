package ops_test

import (
	"context"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/ops"
)

// A check that erases soft-deleted names past keep_deleted loses data as
// an erasing rm does: its audit event says so, as every op is audited with
// the versions it touched (SPEC §11), and never with a value.
func TestCheckAuditsWhatItErases(t *testing.T) {
	ctx := context.Background()
	s, events := historyFixture(t, "[vaults.default]\nkind = \"file\"\n[vaults.default.history]\nkeep_deleted = \"1s\"\n")
	put(t, s, "arca://app/db", "canary-one")
	put(t, s, "arca://app/db", "canary-two")
	if _, err := s.Rm(ctx, ops.Request{Ref: "arca://app/db"}); err != nil {
		t.Fatal(err)
	}
	put(t, s, "arca://app/other", "canary-three") // the clock moves past keep_deleted
	res, err := s.Check(ctx, ops.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Erased != 1 {
		t.Fatalf("the check erased %d names, not app/db: the test proves nothing", res.Erased)
	}
	var check string
	for _, l := range strings.Split(events.String(), "\n") {
		if strings.Contains(l, `"op":"check"`) {
			check = l
		}
	}
	if check == "" {
		t.Fatalf("no check event")
	}
	if strings.Contains(events.String(), "canary") {
		t.Errorf("an event holds a value")
	}
	if !strings.Contains(check, "erased") {
		t.Errorf("the check erased app/db's versions 1 and 2 and its event does not say so: %s", check)
	}
}
