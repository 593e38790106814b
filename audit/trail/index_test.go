package trail

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arca-secrets/arca/audit"
)

// indexedFile is a file of the lines ls and an index of it, updated, that
// hashes what it read in chunks of chunk bytes (0: as NewIndex does).
func indexedFile(t *testing.T, ls []string, chunk ...int64) (string, *Index) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(strings.Join(ls, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	x := NewIndex(path)
	if len(chunk) > 0 && chunk[0] > 0 {
		x.chunk = chunk[0]
	}
	if res := indexQuery(t, x, true); res.Broken != nil || res.Invalid != nil || res.Chain.Lines != len(ls) {
		t.Fatalf("the trail as written: %s", summary(res))
	}
	return path, x
}

// indexQuery queries x for every event, updating it first when update.
func indexQuery(t *testing.T, x *Index, update bool) QueryResult {
	t.Helper()
	if update {
		if err := x.Update(); err != nil {
			t.Fatal(err)
		}
	}
	res, err := x.Query(Filter{}, 1000, 4)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// editInPlace rewrites the byte at off of the file at path, keeping its
// size and its modification time: what only reading it again can see.
func editInPlace(t *testing.T, path string, off int64, b byte) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{b}, off); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, time.Time{}, fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if after, err := os.Stat(path); err != nil || after.Size() != fi.Size() || !after.ModTime().Equal(fi.ModTime()) {
		t.Fatalf("the edit changed the file's size or time: %v", err)
	}
}

// actorAt is the offset of the last byte of the actor of line n (from 1).
func actorAt(ls []string, n int) int64 {
	off := len(strings.Join(ls[:n-1], ""))
	return int64(off + strings.Index(ls[n-1], `"actor":"agent-1"`) + len(`"actor":"agent-1`) - 1)
}

// A line edited in place, to the same length and with the file's time put
// back, is seen: the index reads the file again and reports the break
// Verify reports, with no anchor, and shows the line as it is now.
// The bytes read are hashed in chunks, checked in parallel: an edit is
// seen in a whole chunk, in the part after them, and across chunks of one
// byte.
func TestIndexSeesAnEditInPlace(t *testing.T) {
	for _, chunk := range []int64{0, 1, 100, 1000} {
		ls := trailOf(t, audit.SourceCLI, 10)
		path, x := indexedFile(t, ls, chunk)
		editInPlace(t, path, actorAt(ls, 5), '9')
		res := indexQuery(t, x, true)
		if res.Broken == nil || res.Broken.Line != 6 {
			t.Fatalf("chunks of %d bytes: after an edit of line 5: %s", chunk, summary(res))
		}
		b, _ := os.ReadFile(path)
		wantBreak(t, "the edited file", string(b), nil, 6, "a line was edited")
		if got := res.Latest[4].Event.Actor; got != "agent-9" {
			t.Fatalf("chunks of %d bytes: line 5 shows actor %q, not the file's", chunk, got)
		}
	}
}

// An edit with growth after it, as when other processes write while the
// trail is edited, is still an edit: growth is only the bytes read before,
// unchanged, and more after them.
func TestIndexSeesAnEditUnderGrowth(t *testing.T) {
	for _, chunk := range []int64{0, 7, 1000} {
		editUnderGrowth(t, chunk)
	}
}

func editUnderGrowth(t *testing.T, chunk int64) {
	t.Helper()
	ls := trailOf(t, audit.SourceCLI, 12)
	path, x := indexedFile(t, ls[:8], chunk)
	editInPlace(t, path, actorAt(ls, 3), '7')
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(strings.Join(ls[8:], ""))
	f.Close()
	if res := indexQuery(t, x, true); res.Broken == nil || res.Broken.Line != 4 || res.Chain.Lines != 3 {
		t.Fatalf("chunks of %d bytes: after an edit of line 3 and 4 lines appended: %s", chunk, summary(res))
	}
	// Growth alone keeps the index and adds to it.
	ls = trailOf(t, audit.SourceCLI, 12)
	path, x = indexedFile(t, ls[:8], chunk)
	f, err = os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(strings.Join(ls[8:], ""))
	f.Close()
	if res := indexQuery(t, x, true); res.Broken != nil || res.Chain.Lines != 12 || res.Chain.LastSeq != 12 {
		t.Fatalf("after 4 lines appended: %s", summary(res))
	}
	if chunk > 0 && len(x.chunks) != int(x.off/chunk) {
		t.Fatalf("chunks of %d bytes: %d chunks hashed of %d bytes read", chunk, len(x.chunks), x.off)
	}
}

// A line edited after Update, before the query reads it back, is not
// shown as indexed: the query sees it is not the line indexed, reads the
// file again and answers what it holds now, the break included.
func TestIndexChecksTheLinesItReadsBack(t *testing.T) {
	ls := trailOf(t, audit.SourceCLI, 10)
	path, x := indexedFile(t, ls)
	editInPlace(t, path, actorAt(ls, 9), '8')
	res := indexQuery(t, x, false)
	if res.Broken == nil || res.Broken.Line != 10 || res.Latest[8].Event.Actor != "agent-8" {
		t.Fatalf("line 9 edited between Update and Query: %s", summary(res))
	}
	// The line is checked, not only decoded: the error says so when the
	// file cannot be read again either.
	ls = trailOf(t, audit.SourceCLI, 3)
	path, x = indexedFile(t, ls)
	editInPlace(t, path, actorAt(ls, 2), '2')
	if _, err := x.query(Filter{}, 10, 4, Span{}); !errors.Is(err, errChanged) || !strings.Contains(err.Error(), "line 2 is not the line indexed") {
		t.Fatalf("a line read back that was edited: %v", err)
	}
}

// A line that is not an event stops the index; when it is mended in place
// the file is read again, and the chain holds.
func TestIndexSeesABadLineMended(t *testing.T) {
	ls := trailOf(t, audit.SourceCLI, 6)
	bad := append([]string{}, ls...)
	bad[3] = strings.Replace(ls[3], `{"v":1`, `{"v":!`, 1)
	path, x := indexedFile(t, bad[:3])
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(strings.Join(bad[3:], ""))
	f.Close()
	if res := indexQuery(t, x, true); res.Invalid == nil || res.Chain.Lines != 3 {
		t.Fatalf("a line that is not an event: %s", summary(res))
	}
	editInPlace(t, path, int64(len(strings.Join(ls[:3], ""))+len(`{"v":`)), '1')
	if res := indexQuery(t, x, true); res.Invalid != nil || res.Broken != nil || res.Chain.Lines != 6 {
		t.Fatalf("the line mended: %s", summary(res))
	}
}

// A file that ends in the middle of a line is what arca audit verify
// calls broken, at that line; once the line is whole, the chain holds and
// the line is indexed.
func TestIndexSeesATornLastLine(t *testing.T) {
	ls := trailOf(t, audit.SourceCLI, 4)
	path, x := indexedFile(t, ls[:3])
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	half := len(ls[3]) / 2
	f.WriteString(ls[3][:half])
	res := indexQuery(t, x, true)
	_, verr := Verify(strings.NewReader(strings.Join(ls[:3], "")+ls[3][:half]), nil)
	if res.Cut == nil || verr == nil || res.Cut.Error() != verr.Error() || res.Chain.Lines != 3 {
		t.Fatalf("a torn last line: %s, cut %v; verify says %v", summary(res), res.Cut, verr)
	}
	f.WriteString(ls[3][half:])
	if res := indexQuery(t, x, true); res.Cut != nil || res.Broken != nil || res.Chain.Lines != 4 {
		t.Fatalf("the line made whole: %s, cut %v", summary(res), res.Cut)
	}
}

// A file removed is empty: the index keeps none of its events.
func TestIndexOfARemovedFile(t *testing.T) {
	path, x := indexedFile(t, trailOf(t, audit.SourceCLI, 4))
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if res := indexQuery(t, x, true); res.Matched != 0 || res.Chain.Lines != 0 {
		t.Fatalf("a removed file: %s", summary(res))
	}
}

// summary is what a failure shows of res.
func summary(res QueryResult) string {
	return fmt.Sprintf("%d lines (anchor %s), %d matched, break %v, invalid %v", res.Chain.Lines, res.Chain.Last, res.Matched, res.Broken, res.Invalid)
}

// BenchmarkIndexUpdate is what each read of the page costs the index of a
// trail of 100,000 events that did not change: the SHA-256 of the bytes
// it read, in chunks, to tell growth from an edit (b.SetBytes: their
// number).
func BenchmarkIndexUpdate(b *testing.B) {
	ls := trailOf(b, audit.SourceCLI, 100_000)
	path := filepath.Join(b.TempDir(), "audit.log")
	text := strings.Join(ls, "")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		b.Fatal(err)
	}
	x := NewIndex(path)
	if err := x.Update(); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if err := x.Update(); err != nil {
			b.Fatal(err)
		}
	}
	if res, err := x.Query(Filter{}, 1, 1); err != nil || res.Chain.Lines != len(ls) || res.Broken != nil {
		b.Fatalf("the index after the loop: %v", err)
	}
}

// The index filters by user and host as Scan does, and the chain of
// lines that carry them holds.
func TestIndexFiltersByUserAndHost(t *testing.T) {
	text := events(t,
		audit.Event{Event: "get", Op: "get", Outcome: audit.OK, Ref: "app/db", User: "ana", Host: "build-1"},
		audit.Event{Event: "get", Op: "get", Outcome: audit.OK, Ref: "app/db", User: "bob", Host: "laptop"},
		audit.Event{Event: "get", Op: "get", Outcome: audit.OK, Ref: "app/db"},
	)
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	x := NewIndex(path)
	if err := x.Update(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		f    Filter
		want []uint64
	}{{Filter{User: "ana"}, []uint64{1}}, {Filter{Host: "l*"}, []uint64{2}}, {Filter{}, []uint64{1, 2, 3}}} {
		res, err := x.Query(c.f, 10, 1)
		if err != nil {
			t.Fatal(err)
		}
		var got []uint64
		for _, e := range res.Latest {
			got = append(got, e.Event.Seq)
		}
		if !slices.Equal(got, c.want) || res.Broken != nil || res.Chain.Lines != 3 {
			t.Errorf("%+v: %v (broken %v), want %v", c.f, got, res.Broken, c.want)
		}
	}
}

// Lines are read in batches parsed in parallel and added in order: over
// more lines than a batch holds, every event is indexed in its place, the
// chain checked across batches, and a line that is not an event past the
// first batch stops the index at that line, the lines before it indexed;
// a last line not whole is read again once it is.
func TestIndexAcrossBatches(t *testing.T) {
	n := batchLines + batchLines/2
	ls := trailOf(t, audit.SourceCLI, n)
	path, x := indexedFile(t, ls)
	res, err := x.Query(Filter{}, 3, 4)
	if err != nil || x.bad != nil || x.broken != nil || res.Matched != n || res.Chain.Lines != n || res.Latest[2].Event.Seq != uint64(n) {
		t.Fatalf("%d lines: matched %d, chain %d, bad %v, broken %v, %v", n, res.Matched, res.Chain.Lines, x.bad, x.broken, err)
	}
	bad := append(slices.Clone(ls[:batchLines+10]), "not an event\n")
	bad = append(bad, ls[batchLines+10:]...)
	if err := os.WriteFile(path, []byte(strings.Join(bad, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	x = NewIndex(path)
	if err := x.Update(); err != nil {
		t.Fatal(err)
	}
	if x.bad == nil || !strings.Contains(x.bad.Error(), fmt.Sprintf("line %d: not an audit event", batchLines+11)) || len(x.events) != batchLines+10 {
		t.Fatalf("a bad line past the first batch: %v, %d events", x.bad, len(x.events))
	}
	// A torn last line, past the first batch: indexed once whole.
	last := ls[n-1]
	if err := os.WriteFile(path, []byte(strings.Join(ls[:n-1], "")+last[:len(last)/2]), 0o600); err != nil {
		t.Fatal(err)
	}
	x = NewIndex(path)
	if err := x.Update(); err != nil || x.cut == nil || len(x.events) != n-1 {
		t.Fatalf("a torn last line: %v, %v, %d events", err, x.cut, len(x.events))
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(last[len(last)/2:])
	f.Close()
	if err := x.Update(); err != nil || x.cut != nil || x.bad != nil || x.broken != nil || len(x.events) != n {
		t.Fatalf("the last line whole: %v, %v, %v, %d events", err, x.cut, x.bad, len(x.events))
	}
}
