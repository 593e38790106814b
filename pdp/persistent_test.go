package pdp

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arca-secrets/arca/pdp/pdptest"
)

// say is pdptest.Say: scripts answer with `say '{"allow":true}'`.
const say = pdptest.Say

// answerAll answers every request line with an allow whose reason is the
// child's pid, so a test can tell whether one child answered them all.
const answerAll = say + `while read l; do say "{\"allow\":true,\"reason\":\"$$\"}"; done`

// step is one decision of a persistent row.
type step struct {
	req      Request  // zero: getReq
	want     *Verdict // nil: unreachable
	why      string   // phrase the Why must contain when unreachable
	samePID  bool     // want.Reason is the pid of the child that answered the step before
	awaitOwe bool     // first wait until the child has failed between decisions
}

type prow struct {
	name    string
	exec    string
	timeout time.Duration // zero: quick
	shell   string        // zero: "sh"
	environ []string      // nil: testEnviron()
	steps   []step
}

func okStep() step             { return step{want: allow("")} }
func failStep(why string) step { return step{why: why} }

// prows lists every way a persistent PDP can answer, fail or lie. Each row
// runs on a fresh decider whose backoff never delays a restart.
func prows() []prow {
	putReq := getReq
	putReq.Op = "put"
	gateLine := say + `while read l; do case $l in *'"op":"get"'*) say '{"allow":true,"reason":"get is fine"}';; ` +
		`*) say '{"allow":false,"reason":"only get"}';; esac; done`
	padLine := func(n int) string {
		return say + `while read l; do say "{$(head -c ` + strconv.Itoa(n-len(`{"allow":true,"nonce":"0123456789abcdef0123456789abcdef"}`)) +
			` /dev/zero | tr '\0' ' ')\"allow\":true}"; done`
	}
	loop := func(body string) string { return say + `while read l; do ` + body + `; done` }
	return []prow{
		// Honest answers.
		{name: "one child answers every decision", exec: answerAll,
			steps: []step{{want: allow("")}, {samePID: true}, {samePID: true}}},
		{name: "reads each request", exec: gateLine,
			steps: []step{{want: allow("get is fine")}, {req: putReq, want: deny("only get")}, {want: allow("get is fine")}}},
		{name: "obligations", exec: loop(`say '{"allow":true,"reason":"ok","obligations":["log","mfa"]}'`),
			steps: []step{{want: allow("ok", "log", "mfa")}}},
		{name: "verdict line exactly at the cap", exec: padLine(MaxVerdict), steps: []step{okStep(), okStep()}},
		{name: "floods stderr", exec: loop(`head -c 1048576 /dev/zero >&2; say '{"allow":true}'`), steps: []step{okStep()}},
		{name: "stderr is /dev/null", exec: loop(`if [ "$(readlink /proc/$$/fd/2)" = /dev/null ]; then say '{"allow":true}'; ` +
			`else say '{"allow":false}'; fi`), steps: []step{okStep()}},
		{name: "environment is the allowlist", environ: append(testEnviron(), "ARCA_TOKEN=x", "AWS_SECRET_ACCESS_KEY=y"),
			exec: loop(`if [ -z "$ARCA_TOKEN$AWS_SECRET_ACCESS_KEY" ] && [ -n "$PATH" ]; then say '{"allow":true}'; ` +
				`else say '{"allow":false}'; fi`), steps: []step{okStep()}},
		{name: "a 64 KiB request is one line", exec: loop(`say "{\"allow\":true,\"reason\":\"${#l}\"}"`),
			steps: []step{{req: bigReq(), want: allow(strconv.Itoa(len(mustEncode(persistentRequest{bigReq(), newNonce()})) - 1))}}},

		// Hangs and deadlines.
		{name: "hangs", exec: loop(`sleep 30`), timeout: short,
			steps: []step{failStep("timed out after 300ms"), failStep("timed out after 300ms")}},
		{name: "never reads a 64 KiB request", exec: `sleep 30`, timeout: short, steps: []step{{req: bigReq(), why: "timed out"}}},
		{name: "hangs with a grandchild", exec: `sleep 30 & ` + loop(`sleep 30`), timeout: short,
			steps: []step{failStep("timed out")}},
		{name: "answers once, then hangs", exec: say + `read l; say '{"allow":true}'; ` + loop(`sleep 30`), timeout: short,
			steps: []step{okStep(), failStep("timed out after 300ms"), okStep()}},

		// Floods and garbage: the child is restarted for the next decision.
		{name: "verdict line one byte over the cap", exec: padLine(MaxVerdict + 1),
			steps: []step{failStep("verdict larger than 65536 bytes"), failStep("verdict larger than 65536 bytes")}},
		{name: "floods stdout without a newline", exec: `head -c 200000 /dev/zero`,
			steps: []step{failStep("verdict larger than 65536 bytes")}},
		{name: "floods stdout with yes", exec: `yes`, steps: []step{failStep("verdict is not JSON")}},
		{name: "garbage", exec: loop(`echo 'allow: yes'`), steps: []step{failStep("verdict is not JSON"), failStep("verdict is not JSON")}},
		{name: "an empty line", exec: loop(`echo`), steps: []step{failStep("verdict is empty")}},
		{name: "an array", exec: loop(`echo '[{"allow":true}]'`), steps: []step{failStep("verdict is not a JSON object")}},
		{name: "two objects on one line", exec: loop(`echo '{"allow":false}{"allow":true}'`),
			steps: []step{failStep("verdict has data after the JSON object")}},
		{name: "allow as a string", exec: loop(`echo '{"allow":"true"}'`), steps: []step{failStep("verdict has no boolean allow")}},
		{name: "allow twice", exec: loop(`echo '{"allow":false,"allow":true}'`), steps: []step{failStep("verdict repeats key allow")}},

		// Lines that answer another request, or none: each retires the
		// child, and the decision it arrived for is unreachable, never the
		// line's verdict.
		{name: "never echoes the nonce", exec: `while read l; do echo '{"allow":true}'; done`,
			steps: []step{failStep("verdict does not echo the request's nonce"), failStep("verdict does not echo the request's nonce")}},
		{name: "echoes a nonce of its own", exec: `while read l; do echo '{"allow":true,"nonce":"0123456789abcdef0123456789abcdef"}'; done`,
			steps: []step{failStep("verdict echoes a nonce that is not its request's")}},
		{name: "echoes an empty nonce", exec: `while read l; do echo '{"allow":true,"nonce":""}'; done`,
			steps: []step{failStep("verdict does not echo the request's nonce")}},
		{name: "nonce as a number", exec: `while read l; do echo '{"allow":true,"nonce":7}'; done`,
			steps: []step{failStep("verdict nonce is not a string")}},
		{name: "nonce twice", exec: loop(`n=${l##*'"nonce":"'}; n=${n%%'"'*}; echo "{\"allow\":true,\"nonce\":\"$n\",\"nonce\":\"$n\"}"`),
			steps: []step{failStep("verdict repeats key nonce")}},
		{name: "a verdict as it starts", exec: `echo '{"allow":true}'; ` + answerAll,
			steps: []step{failStep("verdict does not echo the request's nonce"), failStep("verdict does not echo the request's nonce")}},
		// The first allow written twice, the copy late: once the second
		// request is in, and before the deny the child meant for it (which
		// it writes only once a third request comes).
		{name: "writes one allow twice, late", exec: say + `read l; first=$l; say '{"allow":true,"reason":"first"}'; ` +
			`read l; second=$l; l=$first; say '{"allow":true,"reason":"first"}'; read l; l=$second; say '{"allow":false,"reason":"no"}'`,
			steps: []step{{want: allow("first")}, failStep("verdict echoes the nonce of an earlier request (a stale line)"),
				{want: allow("first")}}},

		// Out of turn.
		{name: "two lines for one request", exec: loop(`two=$(say '{"allow":true}'; say '{"allow":true}'); printf '%s\n' "$two"`),
			steps: []step{failStep("answered out of turn"), failStep("answered out of turn")}},
		{name: "a line nobody asked for", exec: say + `read l; say '{"allow":true}'; sleep 0.05; say '{"allow":true}'; ` + answerAll,
			steps: []step{okStep(), {awaitOwe: true, why: "wrote a line with no request pending"}, okStep()}},

		// Exits.
		{name: "exits without answering", exec: `read l; exit 3`,
			steps: []step{failStep("exited with status 3"), failStep("exited with status 3")}},
		{name: "exits at once", exec: `exit 4`, steps: []step{failStep("exited with status 4")}},
		{name: "answers, then exits", exec: say + `read l; say '{"allow":true}'; exit 0`,
			steps: []step{okStep(), {awaitOwe: true, why: "exited with status 0"}, okStep()}},
		{name: "answers, then exits leaving a grandchild on stdout", exec: say + `read l; say '{"allow":true}'; sleep 30 & exit 0`,
			steps: []step{okStep(), {awaitOwe: true, why: "exited with status 0"}}},
		{name: "kills itself", exec: `read l; kill -9 $$`, steps: []step{failStep("killed by signal 9")}},
		{name: "closes stdout and keeps running", exec: `exec >&-; sleep 30`, steps: []step{failStep("closed its stdout")}},
		{name: "command not found", exec: `arca-no-such-pdp-command`, steps: []step{failStep("exited with status 127")}},
		{name: "shell cannot start", exec: answerAll, shell: "/nonexistent/sh",
			steps: []step{failStep("cannot start"), failStep("cannot start")}},
	}
}

func mustEncode(r any) []byte {
	b, err := encodeRequest(r)
	if err != nil {
		panic(err)
	}
	return b
}

func TestPersistentRows(t *testing.T) {
	for _, r := range prows() {
		t.Run(r.name, func(t *testing.T) { r.check(t) })
	}
}

// groups collects the process group of every child a decider starts, and
// says when a request has been written to one and when one has failed
// between decisions.
type groups struct {
	mu  sync.Mutex
	ids []int

	written chan struct{} // a send per request written, while the buffer lasts
	owed    chan struct{} // a send when a child fails between decisions, unless one waits unread
}

func (g *groups) started(pgid int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ids = append(g.ids, pgid)
}

// signal sends on ch unless that would block: the hooks it serves must not.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

func (g *groups) all() []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]int(nil), g.ids...)
}

// newTestPersistent is a persistent decider over shell whose backoff never
// delays (its clock jumps past every backoff), recording its children.
func newTestPersistent(cfg Config, shell string) (*persistent, *groups) {
	d := newPersistent(cfg, shell)
	g := &groups{written: make(chan struct{}, 64), owed: make(chan struct{}, 1)}
	d.onStart = g.started
	d.onWritten = func() { signal(g.written) }
	d.onOwed = func() { signal(g.owed) }
	clock := time.Now()
	d.now = func() time.Time { // called under d.mu only
		clock = clock.Add(time.Hour)
		return clock
	}
	return d, g
}

func (r prow) check(t *testing.T) {
	goroutines := runtime.NumGoroutine()
	if r.timeout == 0 {
		r.timeout = quick
	}
	if r.shell == "" {
		r.shell = "sh"
	}
	if r.environ == nil {
		r.environ = testEnviron()
	}
	d, g := newTestPersistent(Config{Exec: r.exec, Mode: ModePersistent, Timeout: r.timeout, Environ: r.environ}, r.shell)
	prevReason := ""
	for i, s := range r.steps {
		if s.awaitOwe {
			awaitOwed(t, d, g)
		}
		req := s.req
		if req.Op == "" {
			req = getReq
		}
		t0 := time.Now()
		v, err := d.Decide(context.Background(), req)
		elapsed := time.Since(t0)
		if elapsed >= r.timeout+margin {
			t.Errorf("step %d took %v with a %v timeout", i, elapsed, r.timeout)
		}
		switch {
		case s.samePID:
			if err != nil || !v.Allow || v.Reason != prevReason {
				t.Fatalf("step %d: verdict %+v, err %v; want an allow from child %s", i, v, err, prevReason)
			}
		case s.want != nil:
			if err != nil {
				t.Fatalf("step %d: err = %v, want %+v", i, err, *s.want)
			}
			want := *s.want
			if r.exec == answerAll || strings.HasSuffix(r.exec, answerAll) {
				want.Reason = v.Reason // the pid
			}
			if !reflect.DeepEqual(v, want) {
				t.Fatalf("step %d: verdict = %+v, want %+v", i, v, want)
			}
		default:
			wantUnreachable(t, err, s.why)
			if !reflect.DeepEqual(v, Verdict{}) {
				t.Errorf("step %d: unreachable decision returned verdict %+v", i, v)
			}
		}
		prevReason = v.Reason
	}
	d.Close()
	if r.shell == "sh" {
		for _, pgid := range g.all() {
			wantGroupGone(t, pgid)
		}
	}
	wantGoroutinesBack(t, goroutines)
}

// awaitOwed waits until d's child has failed between decisions: for g's
// word that one did, then for d to still owe it (a word left from an
// earlier failure is taken and waited past).
func awaitOwed(t *testing.T, d *persistent, g *groups) {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		d.mu.Lock()
		owed := d.owed
		d.mu.Unlock()
		if owed != "" {
			return
		}
		select {
		case <-g.owed:
		case <-timeout:
			t.Fatal("the child did not fail between decisions")
		}
	}
}

// TestPersistentBackoff: a child that keeps failing is restarted only once
// its backoff has passed, and the backoff doubles up to its bound.
func TestPersistentBackoff(t *testing.T) {
	starts := filepath.Join(t.TempDir(), "starts")
	d, _ := newTestPersistent(Config{Exec: "echo x >> " + sq(starts) + "; read l; exit 3", Timeout: quick, Environ: testEnviron()}, "sh")
	defer d.Close()
	clock := time.Now()
	d.now = func() time.Time { return clock }
	count := func() int {
		b, _ := os.ReadFile(starts)
		return strings.Count(string(b), "x")
	}
	decide := func(why string, wantStarts int) {
		t.Helper()
		_, err := d.Decide(context.Background(), getReq)
		wantUnreachable(t, err, why)
		if got := count(); got != wantStarts {
			t.Fatalf("%d children started, want %d", got, wantStarts)
		}
	}
	decide("exited with status 3", 1)
	decide("backing off after a failure (exited with status 3)", 1)
	clock = clock.Add(backoffBase - time.Millisecond)
	decide("backing off", 1)
	clock = clock.Add(time.Millisecond)
	decide("exited with status 3", 2)
	clock = clock.Add(backoffBase) // the second backoff is twice the first
	decide("backing off", 2)
	clock = clock.Add(backoffBase)
	decide("exited with status 3", 3)
}

func TestBackoffIsBounded(t *testing.T) {
	want := []time.Duration{0, 20 * time.Millisecond, 40 * time.Millisecond, 80 * time.Millisecond, 160 * time.Millisecond}
	for n, w := range want {
		if got := backoff(n); got != w {
			t.Errorf("backoff(%d) = %v, want %v", n, got, w)
		}
	}
	for _, n := range []int{8, 9, 30, 64, 1 << 20} {
		if got := backoff(n); got != backoffMax {
			t.Errorf("backoff(%d) = %v, want the bound %v", n, got, backoffMax)
		}
	}
}

// TestPersistentBackoffResets: a verdict clears the failures, so the next
// failure waits the first backoff again.
func TestPersistentBackoffResets(t *testing.T) {
	d, _ := newTestPersistent(Config{Exec: say + `read l; say '{"allow":true}'; read l; exit 3`, Timeout: quick, Environ: testEnviron()}, "sh")
	defer d.Close()
	for i := range 3 {
		if _, err := d.Decide(context.Background(), getReq); err != nil {
			t.Fatalf("round %d: first decision: %v", i, err)
		}
		if _, err := d.Decide(context.Background(), getReq); err == nil {
			t.Fatalf("round %d: second decision allowed", i)
		}
		d.mu.Lock()
		failures := d.failures
		d.mu.Unlock()
		if failures != 1 {
			t.Fatalf("round %d: %d failures counted, want 1", i, failures)
		}
	}
}

// TestPersistentPipelined: decisions asked at once are answered in order
// by one child, each with its own request's verdict.
func TestPersistentPipelined(t *testing.T) {
	gateLine := say + `while read l; do case $l in *'"actor":"agent:a'*) say "{\"allow\":true,\"reason\":\"$$\"}";; ` +
		`*) say "{\"allow\":false,\"reason\":\"$$\"}";; esac; done`
	d, g := newTestPersistent(Config{Exec: gateLine, Timeout: quick, Environ: testEnviron()}, "sh")
	const n = 200
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for i := range n {
		wg.Go(func() {
			req := getReq
			req.Actor = "agent:b" + strconv.Itoa(i)
			if i%2 == 0 {
				req.Actor = "agent:a" + strconv.Itoa(i)
			}
			v, err := d.Decide(context.Background(), req)
			if err != nil || v.Allow != (i%2 == 0) {
				errs <- req.Actor + ": " + strconv.FormatBool(v.Allow) + " " + errString(err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if ids := g.all(); len(ids) != 1 {
		t.Errorf("%d children started, want 1", len(ids))
	}
	d.Close()
	for _, pgid := range g.all() {
		wantGroupGone(t, pgid)
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// TestPersistentDeadlineFailsThePipeline: when one decision misses its
// deadline the child is killed, and every decision waiting on it fails.
func TestPersistentDeadlineFailsThePipeline(t *testing.T) {
	d, g := newTestPersistent(Config{Exec: `while read l; do sleep 30; done`, Timeout: short, Environ: testEnviron()}, "sh")
	defer d.Close()
	var wg sync.WaitGroup
	for range 5 {
		wg.Go(func() {
			t0 := time.Now()
			_, err := d.Decide(context.Background(), getReq)
			wantUnreachable(t, err, "timed out")
			if el := time.Since(t0); el >= short+margin {
				t.Errorf("decision took %v with a %v timeout", el, short)
			}
		})
	}
	wg.Wait()
	for _, pgid := range g.all() {
		wantGroupGone(t, pgid)
	}
}

// TestPersistentCancel: a cancelled ctx ends the decision and kills the
// child, as serve's stop does.
func TestPersistentCancel(t *testing.T) {
	d, g := newTestPersistent(Config{Exec: `while read l; do sleep 30; done`, Timeout: quick, Environ: testEnviron()}, "sh")
	defer d.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // cancelled once the request is with the child
		select {
		case <-g.written:
			cancel()
		case <-ctx.Done():
		}
	}()
	_, err := d.Decide(ctx, getReq)
	wantUnreachable(t, err, "cancelled: context canceled")
	for _, pgid := range g.all() {
		wantGroupGone(t, pgid)
	}
	_, err = d.Decide(ctx, getReq)
	wantUnreachable(t, err, "cancelled")
}

// TestPersistentCancelledAnswerGoesNowhere: a decision that gives up while
// another waits behind it on the same child retires the child with both
// queued, so the answer the child owes the first can never be taken as the
// second's (the policy allows agent:a; it answers only after A gives up,
// which the child's sleep, cut short by the kill, stands for).
func TestPersistentCancelledAnswerGoesNowhere(t *testing.T) {
	exec := say + `while read l; do sleep 30; case $l in *'"actor":"agent:a"'*) say '{"allow":true}';; *) say '{"allow":false}';; esac; done`
	d, g := newTestPersistent(Config{Exec: exec, Timeout: quick, Environ: testEnviron()}, "sh")
	defer d.Close()
	reqA, reqB := getReq, getReq
	reqA.Actor, reqB.Actor = "agent:a", "agent:b"
	ctxA, cancelA := context.WithCancel(context.Background())
	defer cancelA()
	doneA := make(chan error, 1)
	go func() {
		_, err := d.Decide(ctxA, reqA)
		doneA <- err
	}()
	<-g.written // A is written first
	go func() { // A gives up once B is written behind it
		<-g.written
		cancelA()
	}()
	v, err := d.Decide(context.Background(), reqB)
	if v.Allow {
		t.Fatalf("agent:b, denied by the policy, was allowed: %+v", v)
	}
	// B's own context was not cancelled: its reason says whose was.
	wantUnreachable(t, err, "the decider was retired for another decision (cancelled: context canceled)")
	errA := <-doneA
	wantUnreachable(t, errA, "cancelled: context canceled")
	if strings.Contains(errA.Error(), "another decision") {
		t.Errorf("the decision that was cancelled is told it was another's: %v", errA)
	}
	for _, pgid := range g.all() {
		wantGroupGone(t, pgid)
	}
}

// TestPersistentClose: Close fails the decision in flight, kills the child
// and refuses later decisions.
func TestPersistentClose(t *testing.T) {
	goroutines := runtime.NumGoroutine()
	d, g := newTestPersistent(Config{Exec: `while read l; do sleep 30; done`, Timeout: quick, Environ: testEnviron()}, "sh")
	done := make(chan error, 1)
	go func() {
		_, err := d.Decide(context.Background(), getReq)
		done <- err
	}()
	<-g.written // the decision is in flight
	d.Close()
	wantUnreachable(t, <-done, "pdp is closed")
	_, err := d.Decide(context.Background(), getReq)
	wantUnreachable(t, err, "pdp is closed")
	wantGroupGone(t, g.all()[0])
	wantGoroutinesBack(t, goroutines)
}

func TestPersistentTimeoutMustBePositive(t *testing.T) {
	d, g := newTestPersistent(Config{Exec: answerAll, Environ: testEnviron()}, "sh")
	defer d.Close()
	_, err := d.Decide(context.Background(), getReq)
	wantUnreachable(t, err, "timeout must be positive")
	if len(g.all()) != 0 {
		t.Error("a child started")
	}
}

// TestNewPicksTheMode: New gives a spawner by default and a persistent
// child for mode persistent.
func TestNewPicksTheMode(t *testing.T) {
	for _, mode := range []string{"", ModeSpawn, ModePersistent} {
		d := New(Config{Exec: answerAll, Mode: mode, Timeout: quick, Environ: testEnviron()})
		_, persistent := d.(*persistent)
		if persistent != (mode == ModePersistent) {
			t.Errorf("mode %q: got %T", mode, d)
		}
		d.Close()
	}
}

// TestPersistentJQ runs docs/pdp.md's persistent example, one jq for every
// decision (scripts/test.sh installs jq; its absence fails the test).
func TestPersistentJQ(t *testing.T) {
	jq, err := exec.LookPath("jq")
	if err != nil {
		t.Fatal("jq is not installed: run scripts/test.sh, or apt-get install jq")
	}
	policy, err := filepath.Abs("testdata/pdp.jq")
	if err != nil {
		t.Fatal(err)
	}
	d, g := newTestPersistent(Config{Exec: sq(jq) + " --unbuffered -c -f " + sq(policy), Timeout: quick, Environ: testEnviron()}, "sh")
	for _, c := range []struct {
		req  Request
		want Verdict
	}{
		{Request{Actor: "agent:ci", Attestation: "ci-job-7781", Op: "get", Env: "dev", Ref: "app/db"}, *allow("agent:ci may read dev")},
		{Request{Actor: "agent:ci", Op: "get", Env: "prod", Ref: "app/db"}, *deny("only agent:ci may read, and only in dev")},
		{Request{Actor: "agent:ci", Op: "list", Env: "dev"}, *deny("only agent:ci may read, and only in dev")},
		{Request{Actor: "agent:ci", Op: "get", Env: "dev", Ref: "app/db"}, *allow("agent:ci may read dev")},
	} {
		v, err := d.Decide(context.Background(), c.req)
		if err != nil || !reflect.DeepEqual(v, c.want) {
			t.Errorf("%+v: verdict %+v, err %v; want %+v", c.req, v, err, c.want)
		}
	}
	if n := len(g.all()); n != 1 {
		t.Errorf("%d jq processes started, want 1", n)
	}
	d.Close()
	wantGroupGone(t, g.all()[0])
}
