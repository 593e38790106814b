package trail

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arca-secrets/arca/audit"
)

// events writes evs as a CLI writer would, one second apart from start.
func events(t *testing.T, evs ...audit.Event) string {
	t.Helper()
	var b strings.Builder
	clock := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	w := audit.NewWriter(&b, audit.SourceCLI, func() time.Time { clock = clock.Add(time.Second); return clock })
	for _, e := range evs {
		if err := w.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

func seqs(t *testing.T, text string, f Filter) []uint64 {
	t.Helper()
	var got []uint64
	if err := Scan(strings.NewReader(text), f, func(e Entry) error {
		got = append(got, e.Event.Seq)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestFilter(t *testing.T) {
	text := events(t,
		audit.Event{Event: "start", Message: "m"},
		audit.Event{Event: "get", Op: "get", Outcome: audit.OK, Env: "prod", Ref: "app/db", Actor: "agent-1"},
		audit.Event{Event: "denied", Op: "get", Outcome: audit.Denied, Env: "prod", Ref: "billing/card", Actor: "agent-2", Code: "denied", Message: "no"},
		audit.Event{Event: "put", Op: "put", Outcome: audit.OK, Env: "dev", Ref: "app/api", Actor: "ci"},
	)
	at := func(s int) time.Time { return time.Date(2026, 12, 1, 10, 0, s, 0, time.UTC) }
	for _, tc := range []struct {
		name string
		f    Filter
		want []uint64
	}{
		{"all", Filter{}, []uint64{1, 2, 3, 4}},
		{"env", Filter{Env: "prod"}, []uint64{2, 3}},
		{"ref glob", Filter{Ref: "app/*"}, []uint64{2, 4}},
		{"op", Filter{Op: "get"}, []uint64{2, 3}},
		{"op of a lifecycle event", Filter{Op: "start"}, []uint64{1}},
		{"outcome", Filter{Outcome: audit.Denied}, []uint64{3}},
		{"actor glob", Filter{Actor: "agent-?"}, []uint64{2, 3}},
		{"since, inclusive", Filter{Since: at(2)}, []uint64{2, 3, 4}},
		{"until, exclusive", Filter{Until: at(3)}, []uint64{1, 2}},
		{"all at once", Filter{Env: "prod", Ref: "*", Op: "get", Outcome: audit.OK, Actor: "agent-*", Since: at(1), Until: at(4)}, []uint64{2}},
	} {
		if got := seqs(t, text, tc.f); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	for _, bad := range []Filter{{Ref: "[z-a]"}, {Actor: `a\b`}, {Since: at(3), Until: at(2)}} {
		if bad.Check() == nil {
			t.Errorf("%+v: Check passed", bad)
		}
	}
	if err := Scan(strings.NewReader(text+"not json\n"), Filter{}, func(Entry) error { return nil }); err == nil || !strings.Contains(err.Error(), "line 5: not an audit event") {
		t.Errorf("a bad line: %v", err)
	}
}

// Follow hands over events as they are appended, a line only once its
// newline is there, reads a file that shrank again from its start, and
// returns when its context ends.
func TestFollow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	text := events(t,
		audit.Event{Event: "get", Op: "get", Outcome: audit.OK, Ref: "a/1"},
		audit.Event{Event: "get", Op: "get", Outcome: audit.OK, Ref: "a/2"},
		audit.Event{Event: "get", Op: "get", Outcome: audit.OK, Ref: "a/3"},
	)
	ls := strings.SplitAfter(text, "\n")
	if err := os.WriteFile(path, []byte(ls[0]), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan string, 10)
	done := make(chan error, 1)
	go func() {
		done <- Follow(ctx, path, Filter{}, 5*time.Millisecond, func(e Entry) error {
			got <- e.Event.Ref
			return nil
		})
	}()
	want := func(refs ...string) {
		t.Helper()
		for _, r := range refs {
			select {
			case g := <-got:
				if g != r {
					t.Fatalf("followed %s, want %s", g, r)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("nothing followed, want %s", r)
			}
		}
	}
	appendTo := func(s string) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(s)
		f.Close()
	}
	want("a/1")
	appendTo(ls[1][:20]) // half a line: not yet
	time.Sleep(30 * time.Millisecond)
	select {
	case g := <-got:
		t.Fatalf("followed %s from half a line", g)
	default:
	}
	appendTo(ls[1][20:] + ls[2])
	want("a/2", "a/3")
	if err := os.WriteFile(path, []byte(ls[0]), 0o600); err != nil { // truncated: read again
		t.Fatal(err)
	}
	want("a/1")
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Follow: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Follow did not return when its context ended")
	}
}
