package ops_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/opstest"
)

// TestCheckErasesExpired: check reports the earlier versions it
// authenticated, and a check after a soft delete has passed keep_deleted
// says it erased the name, in its result and its event; the name is gone
// then, and the next check erases nothing. On each backend the tests run
// here: the file vault, and the vault held in memory that follows
// vault.Step.
func TestCheckErasesExpired(t *testing.T) {
	for name, backends := range map[string]func() ops.Backends{
		"file": func() ops.Backends { return nil },
		"mem":  func() ops.Backends { return &opstest.MemBackends{} },
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			events := &bytes.Buffer{}
			s := opstest.New(t, opstest.Options{Audit: events, Now: func() time.Time { return at }, Backends: backends(),
				Config: "[vaults.default]\nkind = \"file\"\n[vaults.default.history]\nkeep_deleted = \"1h\"\n"}).Service
			for _, w := range [][2]string{{"app/db", "one"}, {"app/db", "two"}, {"app/old", "a"}, {"app/old", "b"}, {"app/old", "c"}} {
				put(t, s, "arca://"+w[0], w[1])
			}
			if _, err := s.Rm(ctx, ops.Request{Ref: "arca://app/old"}); err != nil {
				t.Fatal(err)
			}
			at = at.Add(59 * time.Minute)
			res, err := s.Check(ctx, ops.Request{})
			if err != nil || !res.Healthy || res.Records != 1 || res.Versions != 4 || res.Erased != 0 {
				t.Fatalf("check within keep_deleted: %+v, %v; want 1 record, 4 earlier versions (app/old's 3 among them), none erased", res, err)
			}
			at = at.Add(2 * time.Minute)
			res, err = s.Check(ctx, ops.Request{})
			if err != nil || !res.Healthy || res.Records != 1 || res.Versions != 1 || res.Erased != 1 {
				t.Fatalf("check past keep_deleted: %+v, %v; want 1 record, 1 earlier version, 1 erased", res, err)
			}
			if !strings.Contains(events.String(), `"event":"check","op":"check","outcome":"ok","env":"default","message":"erased 1 soft-deleted name past keep_deleted"`) {
				t.Errorf("the check's event does not say it erased a name:\n%s", events)
			}
			if l, err := s.List(ctx, ops.Request{Deleted: true}); err != nil || len(l.Records) != 1 || l.Records[0].Ref != "arca://app/db" {
				t.Errorf("list with deleted after the check: %+v, %v; want app/db alone", l.Records, err)
			}
			if _, err := s.Undelete(ctx, ops.Request{Ref: "arca://app/old"}); ops.CodeOf(err) != "not_found" {
				t.Errorf("undelete of the erased name: %v, want not_found", err)
			}
			if res, err = s.Check(ctx, ops.Request{}); err != nil || res.Erased != 0 || res.Versions != 1 {
				t.Errorf("a second check: %+v, %v; want nothing erased", res, err)
			}
		})
	}
}
