package audit

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// lines is the file at path, line by line.
func lines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// wantChain fails unless ls are one chain with seq from 1 up: each line
// links to the one before it, the first to none.
func wantChain(t *testing.T, ls []string) {
	t.Helper()
	for i, l := range ls {
		seq := SeqOf([]byte(l))
		if seq != uint64(i+1) {
			t.Fatalf("line %d has seq %d, want %d", i+1, seq, i+1)
		}
		hasPrev := strings.Contains(l, `,"prev":"`)
		switch {
		case i == 0 && hasPrev:
			t.Fatalf("line 1 links to a line before it: %s", l)
		case i > 0 && !strings.HasSuffix(l, `,"prev":"`+Link([]byte(ls[i-1]))+`"}`):
			t.Fatalf("line %d does not link to line %d: %s", i+1, i, l)
		}
	}
}

// A writer to a plain sink links each event to the one before it.
func TestWriterLinks(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf, SourceServe, nil)
	for _, ev := range []string{"start", "get", "stop"} {
		if err := w.Write(Event{Event: ev, Outcome: OK}); err != nil {
			t.Fatal(err)
		}
	}
	wantChain(t, strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n"))
}

// Two processes appending to one audit file (two opens of it here, each
// with its own writer) keep one chain and one seq, in turn and at once.
func TestFileOneChainAcrossWriters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	open := func() *Writer {
		f, err := OpenFile(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return NewWriter(f, SourceCLI, nil)
	}
	a, b := open(), open()
	for i := range 6 {
		w := a
		if i%3 == 2 {
			w = b
		}
		if err := w.Write(Event{Event: "list", Op: "list", Outcome: OK}); err != nil {
			t.Fatal(err)
		}
	}
	if a.Seq() != 5 || b.Seq() != 6 {
		t.Fatalf("writers' seqs %d and %d, want 5 and 6", a.Seq(), b.Seq())
	}
	var wg sync.WaitGroup
	for range 4 {
		w := open()
		wg.Go(func() {
			for range 50 {
				if err := w.WriteFlush(Event{Event: "get", Op: "get", Outcome: OK}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	ls := lines(t, path)
	if len(ls) != 206 {
		t.Fatalf("%d lines, want 206", len(ls))
	}
	wantChain(t, ls)
}

// A file written before events were linked is continued: the next event
// takes the next seq and links to the last line there. A line cut short by
// a crash is cut off first: the next event follows the last whole one.
func TestFileContinuesWhatIsThere(t *testing.T) {
	dir := t.TempDir()
	old := `{"v":1,"ts":"2026-01-01T00:00:00.000000000Z","seq":41,"event":"get","op":"get","outcome":"ok","source":"cli"}`
	for name, content := range map[string]string{"old": old + "\n", "torn": old + "\n" + old[:30]} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := OpenFile(path)
		if err != nil {
			t.Fatal(err)
		}
		w := NewWriter(f, SourceCLI, func() time.Time { return time.Unix(0, 0) })
		if err := w.Write(Event{Event: "list", Op: "list", Outcome: OK}); err != nil {
			t.Fatal(err)
		}
		f.Close()
		ls := lines(t, path)
		last, before := ls[len(ls)-1], ls[len(ls)-2]
		if len(ls) != 2 || before != old || SeqOf([]byte(last)) != 42 || !strings.HasSuffix(last, fmt.Sprintf(`,"prev":"%s"}`, Link([]byte(before)))) {
			t.Fatalf("%s: %q; want the old line and one that follows it", name, ls)
		}
	}
}

// An append to a long trail reads the last line back in pages from the
// end, not the trail's tail: its allocations do not grow with the file.
// Lines longer than a page are read whole (the pages grow), and a torn
// line longer than a page is still cut off.
func TestFileReadsOnlyTheLastLine(t *testing.T) {
	dir := t.TempDir()
	var trail bytes.Buffer
	w := NewWriter(&trail, SourceCLI, func() time.Time { return time.Unix(0, 0) })
	for range 30_000 { // 6 MiB: more than the 4 MiB an append read before
		if err := w.Write(Event{Event: "put", Op: "put", Outcome: OK, Env: "default", Ref: "app/secret-0000000000000000000000000000000000000000000000000000000000000000000000000000", Version: 1}); err != nil {
			t.Fatal(err)
		}
	}
	long := strings.Repeat("m", 3*tailPage+17) // a line of several pages
	if err := w.Write(Event{Event: "error", Op: "get", Outcome: Error, Code: "op_error", Message: long}); err != nil {
		t.Fatal(err)
	}
	whole := trail.Bytes()
	ls := strings.Split(strings.TrimSuffix(string(whole), "\n"), "\n")
	last := ls[len(ls)-1]
	for name, content := range map[string][]byte{
		"long":                      whole,
		"long, torn":                append(bytes.Clone(whole), last[:2*tailPage+5]...),
		"short last line":           []byte(strings.Join(ls[:len(ls)-1], "\n") + "\n"),
		"one line of several pages": []byte(last + "\n"),
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_"))
		if err := os.WriteFile(path, content, 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := OpenFile(path)
		if err != nil {
			t.Fatal(err)
		}
		w := NewWriter(f, SourceCLI, func() time.Time { return time.Unix(0, 0) })
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err = w.Write(Event{Event: "list", Op: "list", Outcome: OK})
		runtime.ReadMemStats(&after)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := lines(t, path)
		prev := got[len(got)-2]
		if !strings.HasSuffix(got[len(got)-1], fmt.Sprintf(`,"prev":"%s"}`, Link([]byte(prev)))) || SeqOf([]byte(got[len(got)-1])) != SeqOf([]byte(prev))+1 {
			t.Errorf("%s: the new event does not follow the last whole line", name)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<10 {
			t.Errorf("%s: an append allocated %d bytes; want a few pages at most", name, alloc)
		}
	}
}
