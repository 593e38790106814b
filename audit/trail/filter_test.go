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
		audit.Event{Event: "get", Op: "get", Outcome: audit.OK, Env: "dev", Ref: "app/api", User: "ana", Host: "build-1"},
		audit.Event{Event: "get", Op: "get", Outcome: audit.OK, Env: "dev", Ref: "app/api", User: "bob", Host: "laptop"},
	)
	at := func(s int) time.Time { return time.Date(2026, 12, 1, 10, 0, s, 0, time.UTC) }
	for _, tc := range []struct {
		name string
		f    Filter
		want []uint64
	}{
		{"all", Filter{}, []uint64{1, 2, 3, 4, 5, 6}},
		{"env", Filter{Env: "prod"}, []uint64{2, 3}},
		{"env, and the events of none", Filter{Env: "prod", EnvlessToo: true}, []uint64{1, 2, 3}},
		{"user", Filter{User: "ana"}, []uint64{5}},
		{"user glob", Filter{User: "b*"}, []uint64{6}},
		{"any user: only events that name one", Filter{User: "*"}, []uint64{5, 6}},
		{"any host: only events that name one", Filter{Host: "*"}, []uint64{5, 6}},
		{"host glob", Filter{Host: "build-*"}, []uint64{5}},
		{"user and host", Filter{User: "bob", Host: "build-*"}, nil},
		{"ref glob", Filter{Ref: "app/*"}, []uint64{2, 4, 5, 6}},
		{"op", Filter{Op: "get"}, []uint64{2, 3, 5, 6}},
		{"op of a lifecycle event", Filter{Op: "start"}, []uint64{1}},
		{"outcome", Filter{Outcome: audit.Denied}, []uint64{3}},
		{"actor glob", Filter{Actor: "agent-?"}, []uint64{2, 3}},
		{"since, inclusive", Filter{Since: at(2)}, []uint64{2, 3, 4, 5, 6}},
		{"until, exclusive", Filter{Until: at(3)}, []uint64{1, 2}},
		{"all at once", Filter{Env: "prod", Ref: "*", Op: "get", Outcome: audit.OK, Actor: "agent-*", Since: at(1), Until: at(4)}, []uint64{2}},
	} {
		if got := seqs(t, text, tc.f); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	for _, bad := range []Filter{{Ref: "[z-a]"}, {Actor: `a\b`}, {User: "[z-a]"}, {Host: `a\b`}, {Since: at(3), Until: at(2)}} {
		if bad.Check() == nil {
			t.Errorf("%+v: Check passed", bad)
		}
	}
	if err := Scan(strings.NewReader(text+"not json\n"), Filter{}, func(Entry) error { return nil }); err == nil || !strings.Contains(err.Error(), "line 7: not an audit event") {
		t.Errorf("a bad line: %v", err)
	}
}

// Follow hands over events as they are appended, a line only once its
// newline is there, reads a file that shrank again from its start, and
// returns when its context ends. The test says when it reads again.
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
	polls := make(chan time.Time)
	go func() {
		done <- follow(ctx, path, Filter{}, func() <-chan time.Time { return polls }, func(e Entry) error {
			got <- e.Event.Ref
			return nil
		})
	}()
	// poll lets follow read once more. polls is unbuffered, so a second
	// poll returns only once the read the first let happen is over.
	poll := func() { polls <- time.Time{} }
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
	poll()
	poll()
	select {
	case g := <-got:
		t.Fatalf("followed %s from half a line", g)
	default:
	}
	appendTo(ls[1][20:] + ls[2])
	poll()
	want("a/2", "a/3")
	if err := os.WriteFile(path, []byte(ls[0]), 0o600); err != nil { // truncated: read again
		t.Fatal(err)
	}
	poll()
	want("a/1")
	// Rotated: renamed away, a new file in its place.
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(ls[0]+ls[1]+ls[2]), 0o600); err != nil {
		t.Fatal(err)
	}
	poll()
	want("a/1", "a/2", "a/3")
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

// The index answers what Scan and Verify would, and reads only what was
// appended: an event added after a query shows at the next; a line not
// whole yet waits for its newline; a file that shrank is read again; a
// broken chain is reported at its line.
func TestIndex(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	text := events(t,
		audit.Event{Event: "get", Op: "get", Outcome: audit.OK, Env: "prod", Ref: "app/db", Actor: "agent-1"},
		audit.Event{Event: "denied", Op: "get", Outcome: audit.Denied, Env: "prod", Ref: "billing/card", Actor: "agent-2", Code: "denied", Message: "no"},
		audit.Event{Event: "put", Op: "put", Outcome: audit.OK, Env: "dev", Ref: "app/api"},
	)
	ls := strings.SplitAfter(text, "\n")
	if err := os.WriteFile(path, []byte(ls[0]+ls[1]+ls[2][:10]), 0o600); err != nil {
		t.Fatal(err)
	}
	x := NewIndex(path)
	query := func(f Filter, limit int) QueryResult {
		t.Helper()
		if err := x.Update(); err != nil {
			t.Fatal(err)
		}
		res, err := x.Query(f, limit, 4)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := query(Filter{}, 10)
	if res.Matched != 2 || len(res.Latest) != 2 || len(res.Denied) != 1 || res.Denied[0].Event.Ref != "billing/card" || res.Chain.Lines != 2 || res.Broken != nil {
		t.Fatalf("two whole lines: %+v", res)
	}
	if string(res.Latest[1].Line) != strings.TrimSuffix(ls[1], "\n") {
		t.Fatalf("the line read back: %q", res.Latest[1].Line)
	}
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(ls[2][10:])
	f.Close()
	res = query(Filter{Env: "dev"}, 10)
	if res.Matched != 1 || res.Latest[0].Event.Ref != "app/api" || res.Chain.Lines != 3 {
		t.Fatalf("the appended line: %+v", res)
	}
	if res := query(Filter{}, 1); len(res.Latest) != 1 || res.Latest[0].Event.Seq != 3 || res.Matched != 3 {
		t.Fatalf("the last one: %+v", res)
	}
	// Truncated and rewritten: read from the start again; an edited line
	// breaks the chain at the line after it.
	edited := strings.Replace(ls[0], "agent-1", "agent-X", 1) + ls[1] + ls[2]
	if err := os.WriteFile(path, []byte(edited[:len(edited)-5]), 0o600); err != nil {
		t.Fatal(err)
	}
	query(Filter{}, 10)
	if err := os.WriteFile(path, []byte(ls[0]), 0o600); err != nil {
		t.Fatal(err)
	}
	if res := query(Filter{}, 10); res.Chain.Lines != 1 || res.Matched != 1 {
		t.Fatalf("after the file shrank: %+v", res)
	}
	x = NewIndex(path)
	if err := os.WriteFile(path, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	if res := query(Filter{}, 10); res.Broken == nil || res.Broken.Line != 2 || res.Matched != 3 {
		t.Fatalf("an edited line: %+v", res)
	}
	bars := 0
	for _, b := range query(Filter{}, 10).Bars {
		bars += b.OK + b.Denied + b.Errors
	}
	if bars != 3 {
		t.Fatalf("the bars hold %d events, want 3", bars)
	}
	// Rotated: the file renamed away, a new and larger one in its place,
	// is read from its start.
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	more := events(t, audit.Event{Event: "list", Op: "list", Outcome: audit.OK}, audit.Event{Event: "list", Op: "list", Outcome: audit.OK},
		audit.Event{Event: "list", Op: "list", Outcome: audit.OK}, audit.Event{Event: "list", Op: "list", Outcome: audit.OK})
	if err := os.WriteFile(path, []byte(more), 0o600); err != nil {
		t.Fatal(err)
	}
	if res := query(Filter{}, 10); res.Matched != 4 || res.Broken != nil || res.Invalid != nil || res.Latest[3].Event.Op != "list" {
		t.Fatalf("after a rotation: %+v", res)
	}
}
