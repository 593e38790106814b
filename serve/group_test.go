package serve

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// puts is n put lines, ids from first, refs app/k<id>.
func puts(first, n int) []string {
	var ls []string
	for i := first; i < first+n; i++ {
		ls = append(ls, fmt.Sprintf(`{"op":"put","ref":"arca://app/k%d","value":"v%d","id":%d}`, i, i, i))
	}
	return ls
}

// putsAnswered is what puts(first, n) are answered and audited with when
// every one lands: their replies, and their events as eventsOf has them.
func putsAnswered(first, n int) ([]want, []string) {
	var ws []want
	var evs []string
	for i := first; i < first+n; i++ {
		ws = append(ws, ok(fmt.Sprint(i)))
		evs = append(evs, fmt.Sprintf("put:%d", i))
	}
	return ws, evs
}

// eventsOf is each request event as "event:id", in order.
func eventsOf(t *testing.T, tr transcript) []string {
	var out []string
	for _, e := range tr.requestEvents(t) {
		out = append(out, e.Event+":"+string(e.ID))
	}
	return out
}

func wantEvents(t *testing.T, tr transcript, want ...string) {
	t.Helper()
	if got := eventsOf(t, tr); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("events on the wire:\n got %v\nwant %v", got, want)
	}
}

// Writes already in the input commit together: one commit for the run,
// every write audited in order with its own event, every reply after the
// commit and in order. A read ends the run and sees it committed.
func TestGroupCommitsOnce(t *testing.T) {
	f := newFixture(t)
	var out lockedBuffer
	repliesAtCommit := -1
	f.spy.onCommit = func() { repliesAtCommit = strings.Count(string(out.Bytes()), "\n") }
	in := lines(append(puts(1, 50), `{"op":"list","id":51}`)...)
	tr := f.session(t, sessionOpts{stdin: strings.NewReader(in), sent: []byte(in), stdout: &out})
	ws, evs := putsAnswered(1, 50)
	checkReplies(t, tr, append(ws, ok("51")))
	wantEvents(t, tr, append(evs, "list:51")...)
	if n := f.spy.counted("commit"); n != 1 {
		t.Errorf("50 pipelined puts: %d commits, want 1", n)
	}
	if repliesAtCommit != 0 {
		t.Errorf("%d replies were on stdout when the group committed, want none", repliesAtCommit)
	}
	if rs := tr.responses(t); len(rs) == 51 && strings.Count(string(rs[50].Result), `"ref":`) != 50 {
		t.Errorf("the list after the group: %s", rs[50].Result)
	}
}

// With MaxGroup 1 every write commits on its own: the switch the
// benchmarks turn grouping off with.
func TestGroupOfOne(t *testing.T) {
	f := newFixture(t)
	in := lines(puts(1, 5)...)
	tr := f.session(t, sessionOpts{stdin: strings.NewReader(in), sent: []byte(in), maxGroup: 1})
	checkReplies(t, tr, []want{ok("1"), ok("2"), ok("3"), ok("4"), ok("5")})
	if n := f.spy.counted("commit"); n != 5 {
		t.Errorf("5 puts with groups of one: %d commits, want 5", n)
	}
}

// A write prepares against what the writes before it in the group left; a
// read between writes sees the earlier ones committed.
func TestGroupReadsSeeEarlierWrites(t *testing.T) {
	f := newFixture(t)
	tr := f.serve(t, lines(
		`{"op":"put","ref":"arca://app/a","value":"one","id":1}`,
		`{"op":"rotate","ref":"arca://app/a","value":"two","id":2}`,
		`{"op":"get","ref":"arca://app/a","id":3}`,
		`{"op":"put","ref":"arca://app/a","value":"three","id":4}`,
		`{"op":"rm","ref":"arca://app/a","id":5}`,
		`{"op":"put","ref":"arca://app/a","value":"four","id":6}`,
		`{"op":"get","ref":"arca://app/a","id":7}`,
	))
	checkReplies(t, tr, []want{ok("1"), ok("2"), ok("3"), ok("4"), ok("5"), ok("6"), ok("7")})
	rs := tr.responses(t)
	if len(rs) != 7 {
		t.FailNow()
	}
	// The put after rm continues the name's numbering (SPEC §11).
	for i, w := range map[int]string{1: `"version":2`, 2: `"value":"two"`, 3: `"version":3`, 5: `"version":4`, 6: `"value":"four"`} {
		if !strings.Contains(string(rs[i].Result), w) {
			t.Errorf("reply %d: %s does not hold %s", i+1, rs[i].Result, w)
		}
	}
	if !strings.Contains(string(rs[5].Result), `"created":true`) {
		t.Errorf("a put after an rm in the same group: %s, want created", rs[5].Result)
	}
	if n := f.spy.counted("commit"); n != 2 {
		t.Errorf("%d commits, want 2 (the get ends the first group)", n)
	}
}

// A write that fails on its own fails alone, answered and audited where it
// stands; the writes around it commit.
func TestGroupWriteFailsAlone(t *testing.T) {
	f := newFixture(t)
	tr := f.serve(t, lines(
		`{"op":"put","ref":"arca://app/x","value":"x","id":1}`,
		`{"op":"rotate","ref":"arca://app/missing","value":"m","id":2}`,
		`{"op":"put","ref":"arca://app/../etc","value":"m","id":3}`,
		`{"op":"put","ref":"arca://app/y","value":"y","env":"nope","id":4}`,
		`{"op":"rm","ref":"arca://app/missing","id":5}`,
		`{"op":"put","ref":"arca://app/y","value":"y","id":6}`,
		`{"op":"list","id":7}`,
	))
	checkReplies(t, tr, []want{ok("1"), {id: "2", code: "not_found"}, {id: "3", code: "bad_request"},
		{id: "4", code: "bad_request"}, {id: "5", code: "not_found"}, ok("6"), ok("7")})
	wantEvents(t, tr, "put:1", "error:2", "error:3", "error:4", "error:5", "put:6", "list:7")
	if n := f.spy.counted("commit"); n != 1 {
		t.Errorf("%d commits, want 1", n)
	}
	if rs := tr.responses(t); len(rs) == 7 && (!strings.Contains(string(rs[6].Result), "app/x") || !strings.Contains(string(rs[6].Result), "app/y") || strings.Count(string(rs[6].Result), `"ref":`) != 2) {
		t.Errorf("the list after the group: %s, want app/x and app/y", rs[6].Result)
	}
}

// Every write of a group gets its own PDP decision; a refused one is
// denied alone and the others commit.
func TestGroupPDPRefusal(t *testing.T) {
	home := t.TempDir()
	log := filepath.Join(home, "requests")
	exec := `read -r r; printf '%s\n' "$r" >> ` + log + `; case "$r" in *forbidden*) echo '{"allow":false,"reason":"not that one"}';; *) echo '{"allow":true}';; esac`
	f := newFixtureConfig(t, "[serve.pdp]\nexec = "+quoteTOML(exec)+"\ntimeout_ms = 3000\n")
	in := lines(
		`{"op":"put","ref":"arca://app/a","value":"a","id":1}`,
		`{"op":"put","ref":"arca://app/forbidden","value":"f","id":2}`,
		`{"op":"put","ref":"arca://app/b","value":"b","id":3}`,
		`{"op":"list","id":4}`,
	)
	tr := f.session(t, sessionOpts{stdin: strings.NewReader(in), sent: []byte(in), environ: os.Environ()})
	checkReplies(t, tr, []want{ok("1"), {id: "2", code: "denied", msg: "not that one"}, ok("3"), ok("4")})
	wantEvents(t, tr, "put:1", "denied:2", "put:3", "list:4")
	if reqs := consulted(t, log); len(reqs) != 4 {
		t.Errorf("the PDP was asked %d times, want once for each of the 4 requests", len(reqs))
	}
	if n := f.spy.counted("commit"); n != 1 {
		t.Errorf("%d commits, want 1", n)
	}
	rs := tr.responses(t)
	if len(rs) == 4 && (strings.Contains(string(rs[3].Result), "forbidden") || strings.Count(string(rs[3].Result), `"ref":`) != 2) {
		t.Errorf("the list after the group: %s, want app/a and app/b only", rs[3].Result)
	}
	if len(rs) == 4 && string(rs[1].Policy) != `{"allow":false,"reason":"not that one"}` {
		t.Errorf("the refused write's policy: %s", rs[1].Policy)
	}
}

// A commit that fails answers every write it held op_error, each with its
// second event after the group's first events; a write that had already
// failed alone keeps its answer; nothing of the group lands.
func TestGroupCommitFailure(t *testing.T) {
	f := newFixture(t)
	f.spy.commitErr = errors.New("disk on fire")
	in := lines(
		`{"op":"put","ref":"arca://app/a","value":"a","id":1}`,
		`{"op":"rotate","ref":"arca://app/missing","value":"m","id":2}`,
		`{"op":"put","ref":"arca://app/b","value":"b","id":3}`,
	)
	tr := f.session(t, sessionOpts{stdin: strings.NewReader(in), sent: []byte(in), broken: true})
	if tr.err != nil {
		t.Fatalf("serve failed: %v", tr.err)
	}
	notCommitted := "was audited but not committed: disk on fire"
	checkReplies(t, tr, []want{{id: "1", code: "op_error", msg: notCommitted}, {id: "2", code: "not_found"}, {id: "3", code: "op_error", msg: notCommitted}})
	wantEvents(t, tr, "put:1", "error:2", "put:3", "error:1", "error:3")
	for _, e := range tr.requestEvents(t) {
		if e.Event == "error" && string(e.ID) != "2" && (e.Outcome != "error" || e.Code != "op_error" || e.Ref == "") {
			t.Errorf("second event %+v, want outcome error, code op_error, with its ref", e)
		}
	}
	f.spy.commitErr = nil
	after := f.serve(t, lines(`{"op":"list","id":1}`))
	if rs := after.responses(t); len(rs) != 1 || !strings.Contains(string(rs[0].Result), `"records":[]`) {
		t.Errorf("the vault after a failed group: %s", after.stdout)
	}
}

// The same through the file vault itself: its temp file cannot be made
// (a directory stands in its place), so the rewrite fails after every
// write of the group was audited.
func TestGroupFileRewriteFails(t *testing.T) {
	f := newFixture(t)
	_, vc, err := f.cfg.VaultFor("default")
	if err != nil {
		t.Fatal(err)
	}
	blocker := filepath.Join(vc.Path+".tmp", "x")
	if err := os.MkdirAll(blocker, 0o700); err != nil {
		t.Fatal(err)
	}
	in := lines(puts(1, 3)...)
	tr := f.session(t, sessionOpts{stdin: strings.NewReader(in), sent: []byte(in), broken: true})
	checkReplies(t, tr, []want{{id: "1", code: "op_error", msg: "not committed"}, {id: "2", code: "op_error", msg: "not committed"}, {id: "3", code: "op_error", msg: "not committed"}})
	wantEvents(t, tr, "put:1", "put:2", "put:3", "error:1", "error:2", "error:3")
	os.RemoveAll(vc.Path + ".tmp")
	after := f.serve(t, lines(`{"op":"list","id":1}`))
	if rs := after.responses(t); len(rs) != 1 || !strings.Contains(string(rs[0].Result), `"records":[]`) {
		t.Errorf("the vault after a failed rewrite: %s", after.stdout)
	}
}

// When the audit wire fails inside a group, the write whose event could
// not be written is not committed and the group ends there; the writes
// audited before it commit (the wire says they did); serve stops.
func TestGroupAuditFailure(t *testing.T) {
	f := newFixture(t)
	// start, then the events of puts 1 and 2; put 3's event fails.
	tr, _ := brokenSession(t, f, 3, lines(puts(1, 5)...))
	checkReplies(t, tr, []want{wireGoneID("1"), wireGoneID("2"), wireGoneID("3")})
	wantEvents(t, tr, "put:1", "put:2")
	after := f.serve(t, lines(`{"op":"list","id":1}`))
	rs := after.responses(t)
	if len(rs) != 1 || strings.Count(string(rs[0].Result), `"ref":`) != 2 || !strings.Contains(string(rs[0].Result), "app/k1") || !strings.Contains(string(rs[0].Result), "app/k2") {
		t.Errorf("the vault after the wire failed at the third put: %s, want k1 and k2", after.stdout)
	}
}

// A client that sends writes and closes stdin at once gets every one
// answered and committed, the last line too without its newline.
func TestGroupStdinClosedMidGroup(t *testing.T) {
	f := newFixture(t)
	inR, inW := io.Pipe()
	ls := puts(1, 20)
	sent := lines(ls...) + `{"op":"put","ref":"arca://app/last","value":"l","id":21}`
	go func() {
		io.WriteString(inW, sent)
		inW.Close()
	}()
	tr := f.session(t, sessionOpts{stdin: inR, sent: []byte(sent)})
	var ws []want
	for i := 1; i <= 21; i++ {
		ws = append(ws, ok(fmt.Sprint(i)))
	}
	checkReplies(t, tr, ws)
	after := f.serve(t, lines(`{"op":"list","id":1}`))
	if rs := after.responses(t); len(rs) != 1 || strings.Count(string(rs[0].Result), `"ref":`) != 21 {
		t.Errorf("after stdin closed: %s, want 21 records", after.stdout)
	}
}

// A group never waits for input: a client that sends a write and waits
// for its answer gets it, and the next.
func TestGroupNeverWaitsForInput(t *testing.T) {
	f := newFixture(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		defer inW.Close()
		br := bufio.NewReader(outR)
		for _, l := range puts(1, 3) {
			if _, err := io.WriteString(inW, l+"\n"); err != nil {
				done <- err
				return
			}
			if _, err := br.ReadString('\n'); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	tr := f.session(t, sessionOpts{stdin: inR, stdout: outW})
	outW.Close()
	if err := <-done; err != nil {
		t.Fatalf("client: %v", err)
	}
	checkReplies(t, tr, []want{ok("1"), ok("2"), ok("3")})
	if n := f.spy.counted("commit"); n != 3 {
		t.Errorf("%d commits for 3 writes sent one at a time, want 3", n)
	}
}

// A group is bounded in time too: with a PDP that takes 60 ms a decision,
// four pipelined writes are not one group (the file vault's lock would be
// held for all four decisions), and each still lands.
func TestGroupIsBoundedInTime(t *testing.T) {
	f := newFixtureConfig(t, "[serve.pdp]\nexec = "+quoteTOML(`cat > /dev/null; sleep 0.06; echo '{"allow":true}'`)+"\ntimeout_ms = 3000\n")
	in := lines(puts(1, 4)...)
	tr := f.session(t, sessionOpts{stdin: strings.NewReader(in), sent: []byte(in), environ: os.Environ()})
	checkReplies(t, tr, []want{ok("1"), ok("2"), ok("3"), ok("4")})
	if n := f.spy.counted("commit"); n < 2 {
		t.Errorf("4 writes of 60 ms decisions each: %d commit, want the group cut at %v", n, maxGroupTime)
	}
}

// A panic while a write joins a group: the write in hand gets its one
// event, then the writes the group held uncommitted get their second
// events; each is answered op_error, in order, and the session goes on.
func TestGroupPanicWhileAdding(t *testing.T) {
	f := newFixture(t)
	f.spy.panicOnAdd = 2
	in := lines(puts(1, 3)...)
	// broken: write 1 has two events for its one reply
	tr := f.session(t, sessionOpts{stdin: strings.NewReader(in), sent: []byte(in), broken: true})
	if tr.err != nil {
		t.Fatalf("serve failed: %v", tr.err)
	}
	internal := "internal error while handling the request"
	checkReplies(t, tr, []want{
		{id: "1", code: "op_error", msg: "was audited but not committed: " + internal},
		{id: "2", code: "op_error", msg: internal},
		ok("3"),
	})
	wantEvents(t, tr, "put:1", "error:2", "error:1", "put:3")
	if strings.Contains(string(tr.rawErr)+string(tr.rawOut), spyPanic) {
		t.Error("the panic's value reached an output")
	}
}

// A panic inside a group's commit leaves its outcome unknown (here it
// landed): every write's second event and answer say so, and a read after
// finds what landed.
func TestGroupPanicInCommit(t *testing.T) {
	f := newFixture(t)
	f.spy.panicOnCommit = true
	in := lines(puts(1, 2)...)
	tr := f.session(t, sessionOpts{stdin: strings.NewReader(in), sent: []byte(in), broken: true})
	if tr.err != nil {
		t.Fatalf("serve failed: %v", tr.err)
	}
	unknown := "was audited, but whether it was committed is unknown: internal error while handling the request"
	checkReplies(t, tr, []want{{id: "1", code: "op_error", msg: unknown}, {id: "2", code: "op_error", msg: unknown}})
	wantEvents(t, tr, "put:1", "put:2", "error:1", "error:2")
	f.spy.panicOnCommit = false
	after := f.serve(t, lines(`{"op":"list","id":1}`))
	if rs := after.responses(t); len(rs) != 1 || !strings.Contains(string(rs[0].Result), "app/k2") {
		t.Errorf("the vault after a commit that landed and panicked: %s", after.stdout)
	}
}

// A panic inside the commit a group makes when a write moves to another
// vault: the write in hand gets its one event, and the committed writes'
// second events and answers say the outcome is unknown (it landed).
func TestGroupPanicInAnInnerCommit(t *testing.T) {
	f := newFixtureConfig(t, "default_env = \"a\"\n[envs.a]\nvault = \"va\"\n[envs.b]\nvault = \"vb\"\n"+
		"[vaults.va]\nkind = \"file\"\n[vaults.vb]\nkind = \"file\"\n")
	f.spy.panicOnCommit = true
	in := lines(`{"op":"put","ref":"arca://app/k1","value":"v1","env":"a","id":1}`,
		`{"op":"put","ref":"arca://app/k2","value":"v2","env":"b","id":2}`)
	tr := f.session(t, sessionOpts{stdin: strings.NewReader(in), sent: []byte(in), broken: true})
	if tr.err != nil {
		t.Fatalf("serve failed: %v", tr.err)
	}
	internal := "internal error while handling the request"
	checkReplies(t, tr, []want{
		{id: "1", code: "op_error", msg: "was audited, but whether it was committed is unknown: " + internal},
		{id: "2", code: "op_error", msg: internal},
	})
	wantEvents(t, tr, "put:1", "error:2", "error:1")
	f.spy.panicOnCommit = false
	after := f.serve(t, lines(`{"op":"get","ref":"arca://app/k1","env":"a","id":1}`))
	if rs := after.responses(t); len(rs) != 1 || !strings.Contains(string(rs[0].Result), `"value":"v1"`) {
		t.Errorf("app/k1 after a commit that landed and panicked: %s", after.stdout)
	}
}

// stepClock is a group clock that moves only when a test moves it.
type stepClock struct {
	mu  sync.Mutex
	now time.Time
}

func newStepClock() *stepClock { return &stepClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *stepClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// names are the refs' names of puts(first, n), as the vault is given them.
func names(first, n int) string {
	var ns []string
	for i := first; i < first+n; i++ {
		ns = append(ns, fmt.Sprintf("app/k%d", i))
	}
	return strings.Join(ns, " ")
}

func (s *spy) reservedNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, ns := range s.reserved {
		out = append(out, strings.Join(ns, " "))
	}
	return out
}

// A group's clock starts once its vault holds what its writes need: a
// wait for the vault's locks longer than maxGroupTime does not cut the
// group, and every write buffered joins it.
func TestGroupClockStartsWhenTheVaultIsHeld(t *testing.T) {
	f := newFixture(t)
	clock := newStepClock()
	entered, release := make(chan struct{}), make(chan struct{})
	waited := false
	f.spy.onReserve = func([]string) error {
		if !waited { // the first group waits; any other would find the vault free
			waited = true
			entered <- struct{}{}
			<-release
		}
		return nil
	}
	go func() {
		<-entered // the vault is waiting for its locks: let long pass
		clock.advance(time.Hour)
		close(release)
	}()
	in := lines(puts(1, 10)...)
	tr := f.session(t, sessionOpts{stdin: strings.NewReader(in), sent: []byte(in), clock: clock.Now})
	ws, _ := putsAnswered(1, 10)
	checkReplies(t, tr, ws)
	if n := f.spy.counted("commit"); n != 1 {
		t.Errorf("10 buffered puts behind a long wait for the vault: %d commits, want 1", n)
	}
	if got := f.spy.reservedNames(); len(got) != 1 || got[0] != names(1, 10) {
		t.Errorf("the vault was asked to reserve %q, want once, the 10 names", got)
	}
}

// The writes a group gathered but had no time for are not dropped: the
// group commits and answers what it took, and they are the next group,
// reserved again, on a clock of its own; the first group's answers are
// on stdout before the next group starts.
func TestGroupLeftoversAreTheNextGroup(t *testing.T) {
	f := newFixture(t)
	clock := newStepClock()
	var out lockedBuffer
	adds := 0
	f.spy.onAdd = func() {
		if adds++; adds == 3 {
			clock.advance(maxGroupTime) // the group's time runs out with its third write
		}
	}
	var answeredAtReserve []int
	f.spy.onReserve = func([]string) error {
		answeredAtReserve = append(answeredAtReserve, strings.Count(string(out.Bytes()), "\n"))
		return nil
	}
	in := lines(append(puts(1, 6), `{"op":"list","id":7}`)...)
	tr := f.session(t, sessionOpts{stdin: strings.NewReader(in), sent: []byte(in), stdout: &out, clock: clock.Now})
	ws, evs := putsAnswered(1, 6)
	checkReplies(t, tr, append(ws, ok("7")))
	wantEvents(t, tr, append(evs, "list:7")...)
	if n := f.spy.counted("commit"); n != 2 {
		t.Errorf("%d commits, want 2 (3 writes, then the 3 left over)", n)
	}
	if got, want := f.spy.reservedNames(), []string{names(1, 6), names(4, 3)}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("the vault was asked to reserve %q, want %q", got, want)
	}
	if fmt.Sprint(answeredAtReserve) != "[0 3]" {
		t.Errorf("answers on stdout as each group reserved: %v, want [0 3]", answeredAtReserve)
	}
	if rs := tr.responses(t); len(rs) == 7 && strings.Count(string(rs[6].Result), `"ref":`) != 6 {
		t.Errorf("the list after the groups: %s, want 6 records", rs[6].Result)
	}
}

// The answers of a committed group are flushed at once, not when the
// input runs dry: here a get is already buffered behind the writes, and
// their answers are on stdout before it runs; the client reads them with
// its input still open, and only then sends more.
func TestGroupAnswersAreFlushedAtOnce(t *testing.T) {
	f := newFixture(t)
	var seen lockedBuffer
	answeredAtGet := -1
	f.spy.onGet = func() { answeredAtGet = strings.Count(string(seen.Bytes()), "\n") }
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	const n = 5
	done := make(chan error, 1)
	go func() {
		defer inW.Close()
		br := bufio.NewReader(outR)
		first := lines(append(puts(1, n), `{"op":"get","ref":"arca://app/k1","id":6}`)...)
		if _, err := io.WriteString(inW, first); err != nil {
			done <- err
			return
		}
		for range n + 1 {
			if _, err := br.ReadString('\n'); err != nil {
				done <- err
				return
			}
		}
		if _, err := io.WriteString(inW, lines(puts(7, 1)...)); err != nil {
			done <- err
			return
		}
		_, err := br.ReadString('\n')
		done <- err
	}()
	tr := f.session(t, sessionOpts{stdin: inR, stdout: io.MultiWriter(&seen, outW)})
	outW.Close()
	if err := <-done; err != nil {
		t.Fatalf("client: %v", err)
	}
	ws, _ := putsAnswered(1, n+2) // the get's answer is ok as a put's is
	checkReplies(t, tr, ws)
	if answeredAtGet != n {
		t.Errorf("%d answers were on stdout when the get behind %d committed writes ran, want %d", answeredAtGet, n, n)
	}
}

// A panic while the vault reserves for a group (inside its first write):
// that write gets its one event and is answered op_error, the vault is let
// go, and the writes gathered behind it are the next group and commit.
func TestGroupPanicWhileReserving(t *testing.T) {
	f := newFixture(t)
	panicked := false
	f.spy.onReserve = func([]string) error {
		if !panicked {
			panicked = true
			panic(spyPanic)
		}
		return nil
	}
	in := lines(puts(1, 3)...)
	tr := f.session(t, sessionOpts{stdin: strings.NewReader(in), sent: []byte(in)})
	checkReplies(t, tr, []want{{id: "1", code: "op_error", msg: "internal error while handling the request"}, ok("2"), ok("3")})
	wantEvents(t, tr, "error:1", "put:2", "put:3")
	if got, want := f.spy.reservedNames(), []string{names(1, 3), names(2, 2)}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("the vault was asked to reserve %q, want %q", got, want)
	}
	if strings.Contains(string(tr.rawErr)+string(tr.rawOut), spyPanic) {
		t.Error("the panic's value reached an output")
	}
}

// A session stopped in the middle of a group: the write in hand is
// answered and audited, the group ends with it, and the writes gathered
// behind it are not run, as lines not yet read are not: no event, no
// reply; the stop event is the last.
func TestGroupStoppedLeavesTheRestUnrun(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.spy.onAdd = cancel
	in := lines(puts(1, 5)...)
	tr := f.session(t, sessionOpts{stdin: strings.NewReader(in), sent: []byte(in), ctx: ctx, interrupted: true})
	if tr.err == nil {
		t.Error("Serve returned nil after its ctx was cancelled")
	}
	rs := tr.responses(t)
	if len(rs) != 1 || string(rs[0].ID) != "1" {
		t.Errorf("replies %s, want one, to write 1", tr.rawOut)
	}
	for _, e := range tr.requestEvents(t) {
		if string(e.ID) != "1" {
			t.Errorf("an event of a write behind the stop: %+v", e)
		}
	}
	wantStop(t, tr, "cancelled: context canceled")
}

// A vault that cannot reserve for a group: the writes take their way
// through the vault one by one instead, each answered and audited once,
// all in one commit.
func TestGroupReserveFails(t *testing.T) {
	f := newFixture(t)
	f.spy.onReserve = func([]string) error { return errors.New("the locks were not won") }
	in := lines(puts(1, 4)...)
	tr := f.session(t, sessionOpts{stdin: strings.NewReader(in), sent: []byte(in)})
	ws, evs := putsAnswered(1, 4)
	checkReplies(t, tr, ws)
	wantEvents(t, tr, evs...)
	if n := f.spy.counted("commit"); n != 1 {
		t.Errorf("%d commits, want 1", n)
	}
	if got := f.spy.reservedNames(); len(got) != 1 || got[0] != names(1, 4) {
		t.Errorf("the vault was asked to reserve %q, want once, the 4 names", got)
	}
}
