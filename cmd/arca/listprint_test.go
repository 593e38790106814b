package main

import (
	"strings"
	"testing"
	"time"

	"github.com/arca-secrets/arca/ops"
)

// On a terminal, list is an aligned table with a header and times relative
// to now (a date past a month, or ahead of now).
func TestPrintListTable(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	rec := func(ref string, v uint64, upd, rot time.Time) ops.ListRecord {
		r := ops.ListRecord{Ref: ref, Version: v}
		r.UpdatedAt.Time, r.RotatedAt.Time = upd, rot
		return r
	}
	recs := []ops.ListRecord{
		rec("arca://app/db", 12, now.Add(-90*time.Second), now.Add(-3*time.Hour)),
		rec("arca://app/api-token", 1, now.Add(-20*time.Second), time.Time{}),
		rec("arca://ci/t", 3, now.Add(-50*24*time.Hour), now.Add(-2*24*time.Hour)),
		rec("arca://ci/skew", 1, now.Add(time.Hour), time.Time{}),
	}
	var b strings.Builder
	if err := printList(&b, recs, true, false, now); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"REF                   VERSION  UPDATED     ROTATED\n" +
		"arca://app/db         12       1m ago      3h ago\n" +
		"arca://app/api-token  1        just now    -\n" +
		"arca://ci/t           3        2026-10-12  2d ago\n" +
		"arca://ci/skew        1        2026-12-01  -\n"
	if b.String() != want {
		t.Errorf("the table is\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	if err := printList(&b, recs[:1], false, false, now); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != "arca://app/db\t12\t2026-12-01T11:58:30Z\t2026-12-01T09:00:00Z\n" {
		t.Errorf("in a pipe: %q", got)
	}
}
