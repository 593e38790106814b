package serve

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/arca-secrets/arca/manifest"
)

// The reads already in the input run at once (reads.go). Every session
// here goes through the harness, which holds the events to one chain from
// start (the check `arca audit verify` makes), one event per reply in reply
// order, and every line to its schema.

// gets returns n get lines of app/r<i % records>, ids first, first+1, ….
func gets(first, n, records int) []string {
	var ls []string
	for i := range n {
		ls = append(ls, fmt.Sprintf(`{"id":%d,"op":"get","ref":"arca://app/r%d"}`, first+i, (first+i)%records))
	}
	return ls
}

// putRecords returns put lines that make records app/r0… with values v-<i>.
func putRecords(records int) []string {
	var ls []string
	for i := range records {
		ls = append(ls, fmt.Sprintf(`{"id":"p%d","op":"put","ref":"arca://app/r%d","value":"v-%d"}`, i, i, i))
	}
	return ls
}

// inFlight counts the gets in the vault at once; with hold > 0, the first
// hold gets are held in the vault until hold of them are in it together
// (a test of a session that ran them one at a time fails here, at the
// guard's deadline, instead of hanging).
type inFlight struct {
	t         *testing.T
	guard     context.Context // the deadline the held gets share
	hold      int32
	arrived   atomic.Int32
	all       chan struct{}
	mu        sync.Mutex
	now, peak int
}

func newInFlight(t *testing.T, hold int) *inFlight {
	guard, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return &inFlight{t: t, guard: guard, hold: int32(hold), all: make(chan struct{})}
}

func (f *inFlight) around(string) func() {
	f.mu.Lock()
	f.now++
	f.peak = max(f.peak, f.now)
	f.mu.Unlock()
	if n := f.arrived.Add(1); n <= f.hold {
		if n == f.hold {
			close(f.all)
		}
		select {
		case <-f.all:
		case <-f.guard.Done():
			f.t.Errorf("%d gets reached the vault, but %d were to be in it at once", f.arrived.Load(), f.hold)
		}
	}
	return func() {
		f.mu.Lock()
		f.now--
		f.mu.Unlock()
	}
}

func (f *inFlight) max() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.peak
}

// TestReadsRunAtOnce: gets already in the input are in the vault at once,
// and answered in request order with their own values.
func TestReadsRunAtOnce(t *testing.T) {
	const records, n = 3, 8
	f := newFixture(t)
	fl := newInFlight(t, n)
	f.spy.aroundGet = fl.around
	in := lines(append(putRecords(records), gets(1, n, records)...)...)
	tr := f.serve(t, in)
	var ws []want
	for i := range records {
		ws = append(ws, ok(fmt.Sprintf(`"p%d"`, i)))
	}
	for i := range n {
		ws = append(ws, ok(fmt.Sprint(1+i)))
	}
	checkReplies(t, tr, ws)
	for i, r := range tr.responses(t)[records:] {
		if want := fmt.Sprintf(`"value":"v-%d"`, (1+i)%records); !strings.Contains(string(r.Result), want) {
			t.Errorf("get %d: %s, want %s", 1+i, r.Result, want)
		}
	}
	if fl.max() != n {
		t.Errorf("%d gets in the vault at once, want %d", fl.max(), n)
	}
}

// TestReadsAreBounded: of manifest.MaxReads+k gets already in the input,
// MaxReads are in the vault at once, never more; all are answered in order.
func TestReadsAreBounded(t *testing.T) {
	const records, k = 2, 5
	n := manifest.MaxReads + k
	f := newFixture(t)
	fl := newInFlight(t, manifest.MaxReads)
	f.spy.aroundGet = fl.around
	tr := f.serve(t, lines(append(putRecords(records), gets(1, n, records)...)...))
	ws := []want{ok(`"p0"`), ok(`"p1"`)}
	for i := range n {
		ws = append(ws, ok(fmt.Sprint(1+i)))
	}
	checkReplies(t, tr, ws)
	if fl.max() != manifest.MaxReads {
		t.Errorf("%d gets in the vault at once, want %d", fl.max(), manifest.MaxReads)
	}
}

// TestReadsOneAtATime: with Options.MaxReads 1, reads already in the input
// run one at a time, as each came.
func TestReadsOneAtATime(t *testing.T) {
	const records, n = 2, 6
	f := newFixture(t)
	fl := newInFlight(t, 0)
	f.spy.aroundGet = fl.around
	in := lines(append(putRecords(records), gets(1, n, records)...)...)
	tr := f.session(t, sessionOpts{stdin: strings.NewReader(in), sent: []byte(in), maxReads: 1})
	ws := []want{ok(`"p0"`), ok(`"p1"`)}
	for i := range n {
		ws = append(ws, ok(fmt.Sprint(1+i)))
	}
	checkReplies(t, tr, ws)
	if fl.max() != 1 {
		t.Errorf("%d gets in the vault at once, want 1", fl.max())
	}
}

// TestReadsThatWaitOnNothingRunInTurn: with no PDP and a vault whose reads
// wait on nothing (a file vault), reads already in the input run one at a
// time: running them at once would gain nothing. With a PDP to wait on,
// they run at once again.
func TestReadsThatWaitOnNothingRunInTurn(t *testing.T) {
	const records, n = 2, 6
	for _, pdp := range []bool{false, true} {
		t.Run(fmt.Sprintf("pdp=%t", pdp), func(t *testing.T) {
			f := newFixture(t)
			if pdp {
				f = scriptPDP(t, `cat >/dev/null; echo '{"allow":true}'`)
			}
			f.spy.readsAlone = true
			hold := 0
			if pdp {
				hold = n
			}
			fl := newInFlight(t, hold)
			f.spy.aroundGet = fl.around
			in := lines(append(putRecords(records), gets(1, n, records)...)...)
			tr := f.session(t, sessionOpts{stdin: strings.NewReader(in), sent: []byte(in), environ: os.Environ()})
			ws := []want{ok(`"p0"`), ok(`"p1"`)}
			for i := range n {
				ws = append(ws, ok(fmt.Sprint(1+i)))
			}
			checkReplies(t, tr, ws)
			if want := map[bool]int{false: 1, true: n}[pdp]; fl.max() != want {
				t.Errorf("%d gets in the vault at once, want %d", fl.max(), want)
			}
		})
	}
}

// TestReadsAroundAWrite: a write in the input ends the run of reads: the
// reads before it answer what was there before it, its event comes after
// theirs, and the reads behind it see it committed.
func TestReadsAroundAWrite(t *testing.T) {
	f := newFixture(t)
	tr := f.serve(t, lines(
		`{"id":1,"op":"put","ref":"arca://app/db","value":"one"}`,
		`{"id":2,"op":"get","ref":"arca://app/db"}`,
		`{"id":3,"op":"list"}`,
		`{"id":4,"op":"get","ref":"arca://app/db"}`,
		`{"id":5,"op":"put","ref":"arca://app/db","value":"two"}`,
		`{"id":6,"op":"get","ref":"arca://app/db"}`,
		`{"id":7,"op":"check"}`,
		`{"id":8,"op":"get","ref":"arca://app/db"}`,
	))
	checkReplies(t, tr, []want{ok("1"), ok("2"), ok("3"), ok("4"), ok("5"), ok("6"), ok("7"), ok("8")})
	rs := tr.responses(t)
	for i, v := range map[int]string{1: `"value":"one","version":1`, 3: `"value":"one","version":1`, 5: `"value":"two","version":2`, 7: `"value":"two","version":2`} {
		if len(rs) == 8 && !strings.Contains(string(rs[i].Result), v) {
			t.Errorf("reply %d: %s, want %s", i+1, rs[i].Result, v)
		}
	}
	wantEvents(t, tr, "put:1", "get:2", "list:3", "get:4", "put:5", "get:6", "check:7", "get:8")
}

// TestReadsRefusedInTheirTurn: a denied read, a line refused before ops
// and a read of a missing record among allowed reads are each answered and
// audited where they stand, and do not end the run.
func TestReadsRefusedInTheirTurn(t *testing.T) {
	f := scriptPDP(t, `case "$(cat)" in *app/secret*) echo '{"allow":false,"reason":"not this one"}';; *) echo '{"allow":true}';; esac`)
	f.spy.aroundGet = newInFlight(t, 3).around // the three allowed gets, at once
	in := lines(
		`{"id":1,"op":"put","ref":"arca://app/db","value":"v"}`,
		`{"id":2,"op":"get","ref":"arca://app/db"}`,
		`{"id":3,"op":"get","ref":"arca://app/secret"}`,
		`{"id":4,"op":"get"}`,
		`{"id":5,"op":"get","ref":"arca://app/db"}`,
		`{"id":6,"op":"nope"}`,
		`{"id":7,"op":"get","ref":"arca://app/missing"}`,
		`{"id":8,"op":"list"}`,
	)
	tr := f.session(t, sessionOpts{stdin: strings.NewReader(in), sent: []byte(in), environ: os.Environ()})
	checkReplies(t, tr, []want{ok("1"), ok("2"), {id: "3", code: "denied", msg: "denied by policy: not this one"},
		bad("4", `"ref"`), ok("5"), unknownOp("6", `unknown op "nope"`), {id: "7", code: "not_found", msg: "not found"}, ok("8")})
	wantEvents(t, tr, "put:1", "get:2", "denied:3", "error:4", "get:5", "error:6", "error:7", "list:8")
}

// TestReadsSlowDecisionKeepsOrder: the first read's PDP decision is held
// until every read behind it has been decided and read from the vault:
// the answers and the events still come in request order.
func TestReadsSlowDecisionKeepsOrder(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "release")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// The decision of a request whose actor is "slow" waits on the fifo.
	script := fmt.Sprintf(`case "$(cat)" in *'"actor":"slow"'*) cat %s >/dev/null;; esac; echo '{"allow":true}'`, quoteShell(fifo))
	f := scriptPDP(t, script)
	t.Cleanup(func() {
		// A writer still waiting for the fifo's reader is let go.
		if r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			r.Close()
		}
	})
	const n = 6
	var others atomic.Int32
	f.spy.aroundGet = func(name string) func() {
		if name != "app/slow" && others.Add(1) == n {
			// Every read behind the slow one is in the vault: let the
			// slow decision end.
			go func() {
				w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // until the slow decision opens it
				if err != nil {
					t.Error(err)
					return
				}
				w.Close()
			}()
		}
		return func() {}
	}
	ls := []string{`{"id":0,"op":"put","ref":"arca://app/slow","value":"s"}`, `{"id":"p","op":"put","ref":"arca://app/r0","value":"v-0"}`,
		`{"id":"slow","op":"get","ref":"arca://app/slow","actor":"slow"}`}
	ls = append(ls, gets(1, n, 1)...)
	in := lines(ls...)
	tr := f.session(t, sessionOpts{stdin: strings.NewReader(in), sent: []byte(in), environ: os.Environ()})
	ws := []want{ok("0"), ok(`"p"`), ok(`"slow"`)}
	for i := range n {
		ws = append(ws, ok(fmt.Sprint(1+i)))
	}
	checkReplies(t, tr, ws)
	if rs := tr.responses(t); len(rs) == len(ws) && !strings.Contains(string(rs[2].Result), `"value":"s"`) {
		t.Errorf("the slow get answered %s", rs[2].Result)
	}
	wantEvents(t, tr, "put:0", `put:"p"`, `get:"slow"`, "get:1", "get:2", "get:3", "get:4", "get:5", "get:6")
}

// scriptPDP is a fixture whose [serve.pdp] spawns script for each
// decision, the request on its stdin.
func scriptPDP(t *testing.T, script string) *fixture {
	return newFixtureConfig(t, "[serve.pdp]\nexec = "+quoteTOML(script)+"\ntimeout_ms = 20000\n")
}

func quoteShell(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestReadsPanicAlone: a read that panics in its goroutine is answered
// op_error and audited in its turn; the reads around it and the session go
// on, and the panic's value reaches no output.
func TestReadsPanicAlone(t *testing.T) {
	f := newFixture(t)
	f.spy.panicOnGet = true
	tr := f.serve(t, lines(
		`{"id":1,"op":"get","ref":"arca://app/db"}`,
		`{"id":2,"op":"list"}`,
		`{"id":3,"op":"get","ref":"arca://app/db"}`,
		`{"id":4,"op":"check"}`,
	))
	const msg = "internal error while handling the request"
	checkReplies(t, tr, []want{{id: "1", code: "op_error", msg: msg}, ok("2"), {id: "3", code: "op_error", msg: msg}, ok("4")})
	if strings.Contains(string(tr.rawOut)+string(tr.rawErr), "PANIC-CANARY") {
		t.Error("the panic's value reached the output")
	}
}

// TestReadsAnsweredWhileTheRunGoesOn: an answer ready is flushed while
// the reads behind it are still under way: the second get is held in the
// vault until the first one's answer is on stdout.
func TestReadsAnsweredWhileTheRunGoesOn(t *testing.T) {
	f := newFixture(t)
	first := &seenWriter{want: []byte(`{"id":0,"ok":true`), seen: make(chan struct{})}
	guard, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	f.spy.aroundGet = func(name string) func() {
		if name == "app/r1" {
			select {
			case <-first.seen:
			case <-guard.Done():
				t.Error("the first get's answer was not flushed while the second was under way")
			}
		}
		return func() {}
	}
	in := lines(append(putRecords(2), gets(0, 2, 2)...)...)
	tr := f.session(t, sessionOpts{stdin: strings.NewReader(in), sent: []byte(in), stdout: first})
	checkReplies(t, tr, []want{ok(`"p0"`), ok(`"p1"`), ok("0"), ok("1")})
}

// seenWriter closes seen once what it was written holds want.
type seenWriter struct {
	mu   sync.Mutex
	buf  []byte
	want []byte
	seen chan struct{}
}

func (w *seenWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	had := bytes.Contains(w.buf, w.want)
	w.buf = append(w.buf, p...)
	if !had && bytes.Contains(w.buf, w.want) {
		close(w.seen)
	}
	return len(p), nil
}
