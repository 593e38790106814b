package ops_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
)

// TestListPage: a list with a Page answers a window of the names its
// pattern picks (a glob, or a substring), how many it picked, and how
// many the window leaves out; a bad window or pattern is bad_request.
func TestListPage(t *testing.T) {
	ctx := context.Background()
	s, _ := historyFixture(t, "")
	for i := range 12 {
		put(t, s, fmt.Sprintf("arca://app/key-%02d", i), "v")
	}
	put(t, s, "arca://billing/card", "v")
	for _, tc := range []struct {
		page          ops.ListPage
		first         string
		rows, matched int
	}{
		{ops.ListPage{}, "arca://app/key-00", 13, 13},
		{ops.ListPage{Offset: 10, Limit: 2}, "arca://app/key-10", 2, 13},
		{ops.ListPage{Offset: 12, Limit: 5}, "arca://billing/card", 1, 13},
		{ops.ListPage{Offset: 99}, "", 0, 13},
		{ops.ListPage{Match: "card"}, "arca://billing/card", 1, 1},
		{ops.ListPage{Match: "app/key-1?"}, "arca://app/key-10", 2, 2},
		{ops.ListPage{Match: "*-0[1-3]", Limit: 2}, "arca://app/key-01", 2, 3},
		{ops.ListPage{Match: "nothing"}, "", 0, 0},
	} {
		res, err := s.List(ctx, ops.Request{Page: &tc.page})
		if err != nil {
			t.Fatalf("%+v: %v", tc.page, err)
		}
		first := ""
		if len(res.Records) > 0 {
			first = res.Records[0].Ref
		}
		if len(res.Records) != tc.rows || res.Matched != tc.matched || first != tc.first ||
			res.Omitted != tc.matched-tc.rows || res.Truncated != (tc.matched > tc.rows) {
			t.Errorf("%+v: %d rows from %q, matched %d, omitted %d, truncated %v; want %d from %q, matched %d",
				tc.page, len(res.Records), first, res.Matched, res.Omitted, res.Truncated, tc.rows, tc.first, tc.matched)
		}
	}
	// Only the soft-deleted names, with list's deleted.
	if _, err := s.Rm(ctx, ops.Request{Ref: "arca://app/key-03"}); err != nil {
		t.Fatal(err)
	}
	res, err := s.List(ctx, ops.Request{Deleted: true, Page: &ops.ListPage{DeletedOnly: true}})
	if err != nil || res.Matched != 1 || len(res.Records) != 1 || res.Records[0].Ref != "arca://app/key-03" || res.Records[0].DeletedAt.IsZero() {
		t.Fatalf("the deleted names: %+v, %v", res, err)
	}
	for _, p := range []ops.ListPage{{Offset: -1}, {Limit: -1}, {Limit: manifest.MaxListRows + 1}, {Match: "[a"}} {
		if _, err := s.List(ctx, ops.Request{Page: &p}); ops.CodeOf(err) != manifest.BadRequest {
			t.Errorf("%+v: %v, want bad_request", p, err)
		}
	}
}
