package trail

import (
	"strings"
	"testing"
	"time"

	"github.com/arca-secrets/arca/audit"
)

// machine writes refs as a CLI on host would, each event at the second
// its clock says.
func machine(t *testing.T, host string, secs []int, refs ...string) string {
	t.Helper()
	var b strings.Builder
	i := 0
	w := audit.NewWriter(&b, audit.SourceCLI, func() time.Time {
		return time.Date(2026, 12, 1, 10, 0, secs[i], 0, time.UTC)
	})
	w.SetWho(audit.Who{User: "ana", Host: host})
	for _, ref := range refs {
		if err := w.Write(audit.Event{Event: "get", Op: "get", Outcome: audit.OK, Ref: ref}); err != nil {
			t.Fatal(err)
		}
		i++
	}
	return b.String()
}

func merged(t *testing.T, f Filter, trails ...string) []string {
	t.Helper()
	var named []Named
	for i, s := range trails {
		named = append(named, Named{Name: []string{"a.log", "b.log"}[i], R: strings.NewReader(s)})
	}
	var got []string
	err := Merge(named, f, func(m Merged) error {
		got = append(got, m.Name+":"+m.Event.Ref+"@"+m.Event.Host+":"+string(rune('0'+m.At)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestMergeIsOneTimeOrderedView(t *testing.T) {
	a := machine(t, "laptop", []int{1, 4, 4, 9}, "a1", "a2", "a3", "a4")
	b := machine(t, "build-1", []int{2, 4, 5}, "b1", "b2", "b3")
	for _, tr := range []string{a, b} {
		if _, err := Verify(strings.NewReader(tr), nil); err != nil {
			t.Fatalf("a machine's trail does not verify: %v", err)
		}
	}
	want := "a.log:a1@laptop:1 b.log:b1@build-1:1 a.log:a2@laptop:2 a.log:a3@laptop:3 b.log:b2@build-1:2 b.log:b3@build-1:3 a.log:a4@laptop:4"
	if got := strings.Join(merged(t, Filter{}, a, b), " "); got != want {
		t.Errorf("merged:\n got %s\nwant %s", got, want)
	}
	if got := strings.Join(merged(t, Filter{Host: "build-*"}, a, b), " "); got != "b.log:b1@build-1:1 b.log:b2@build-1:2 b.log:b3@build-1:3" {
		t.Errorf("merged, build hosts only: %s", got)
	}
	if got := merged(t, Filter{}, "", ""); len(got) != 0 {
		t.Errorf("two empty trails: %v", got)
	}
}

func TestMergeNamesTheTrailOfABadLine(t *testing.T) {
	a := machine(t, "laptop", []int{1}, "a1")
	err := Merge([]Named{{"a.log", strings.NewReader(a)}, {"b.log", strings.NewReader(a + "not json\n")}}, Filter{}, func(Merged) error { return nil })
	if err == nil || err.Error() != "b.log: line 2: not an audit event" {
		t.Errorf("a bad line: %v", err)
	}
}
