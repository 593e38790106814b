package serve

// The session harness every test in this package runs through. It runs a
// whole serve session in-process with a fixed clock and holds every byte the
// session wrote to the published schemas, closed to fields this build does
// not write (manifest.ClosedSchema):
//
//   - every stdout line validates against response; an error response
//     against error; a success against result.<op> for the op its request
//     sent;
//   - every stderr line validates against event;
//   - unless the session is expected to break: exactly one event (one with an
//     "id") per reply, carrying the reply's id; seq counts from 1 without
//     gaps; start is the first event and stop the last.
//
// No test calls Run but through this harness, except the transcripts
// (script_test.go), whose sessions run in child processes and are held to
// the same checks by their wire-valid command.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	audittrail "github.com/arca-secrets/arca/audit/trail"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/backend"
	"github.com/arca-secrets/arca/ops/opstest"
	"github.com/arca-secrets/arca/vault"
)

// reporter is what the checks need of a test: a *testing.T, or the
// transcript tests' adapter for a testscript command.
type reporter interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// fixedNow is the clock of every session in these tests.
var fixedNow = time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)

func fixedClock() time.Time { return fixedNow }

// fixture is a HOME with the default file vault created in it, and a spy
// that counts what reaches the vault.
type fixture struct {
	home string
	cfg  *ops.Config
	spy  *spy
	ops  *opstest.Fixture
}

// newFixture makes a temp HOME with the embedded default config and creates
// its vault.
func newFixture(t testing.TB) *fixture { return newFixtureConfig(t, "") }

// newFixtureConfig is newFixture with the given arca.toml text.
func newFixtureConfig(t testing.TB, toml string) *fixture {
	t.Helper()
	o := opstest.New(t, opstest.Options{Config: toml, Now: fixedClock})
	o.Service.Close() // serve opens the vaults itself
	return &fixture{home: o.Home, cfg: o.Config, spy: &spy{}, ops: o}
}

// spy opens the real vault and counts every call that reaches it.
type spy struct {
	backend.Kinds

	mu         sync.Mutex
	opens      int
	calls      map[string]int
	panicOnGet bool
	// commitErr, when set, fails every group's commit (the group is
	// aborted, nothing of it lands); onCommit runs as a group with writes
	// in it is about to commit.
	commitErr error
	onCommit  func()
	// panicOnAdd panics in the Add of the n-th write added to a group
	// (1-based, counted across groups); panicOnCommit in a group's Commit,
	// after the commit itself.
	panicOnAdd    int
	addsSeen      int
	panicOnCommit bool
	// onAdd runs as a write reaches a group; onGet as a get reaches the
	// vault. onReserve, when set, makes every group a vault.Reserver
	// whose Reserve calls it; reserved holds the names each was given.
	onAdd     func()
	onGet     func()
	onReserve func(names []string) error
	reserved  [][]string
	// aroundGet, when set, is called as a get reaches the vault, from the
	// goroutine the get runs on; what it returns is called once the get
	// is done.
	aroundGet func(name string) (done func())
	// readsAlone makes the spy's store say its reads wait on nothing (as
	// a file vault's do); otherwise it says they wait, as a shared
	// vault's do, so that reads in the input run at once.
	readsAlone bool
}

func (s *spy) Open(name string, vc ops.VaultConfig, now func() time.Time) (vault.Store, error) {
	s.mu.Lock()
	s.opens++
	s.mu.Unlock()
	st, err := s.Kinds.Open(name, vc, now)
	if err != nil {
		return nil, err
	}
	return &spyStore{Store: st, spy: s}, nil
}

func (s *spy) count(method string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.calls == nil {
		s.calls = map[string]int{}
	}
	s.calls[method]++
}

// touched reports how many times the vault was opened or called.
func (s *spy) touched() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.opens
	for _, c := range s.calls {
		n += c
	}
	return n
}

// counted is how many times method was called.
func (s *spy) counted(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

func (s *spy) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opens, s.calls = 0, nil
}

type spyStore struct {
	vault.Store
	spy *spy
}

// spyPanic is what the spy panics with; it must never reach any output.
const spyPanic = "spy panic PANIC-CANARY-5c2e"

func (s *spyStore) Get(ctx context.Context, name string) (vault.Record, error) {
	s.spy.count("get")
	if s.spy.onGet != nil {
		s.spy.onGet()
	}
	if s.spy.panicOnGet {
		panic(spyPanic)
	}
	if s.spy.aroundGet != nil {
		defer s.spy.aroundGet(name)()
	}
	return s.Store.Get(ctx, name)
}

// ReadsWait is what ops asks of a store (see ops.Service.ReadsWait).
func (s *spyStore) ReadsWait() bool { return !s.spy.readsAlone }

func (s *spyStore) List(ctx context.Context) ([]vault.Meta, error) {
	s.spy.count("list")
	return s.Store.List(ctx)
}

func (s *spyStore) Apply(ctx context.Context, w vault.Write, approve vault.Approve) (vault.Meta, error) {
	s.spy.count("apply")
	return s.Store.Apply(ctx, w, approve)
}

func (s *spyStore) Group(ctx context.Context) (vault.Group, error) {
	s.spy.count("group")
	g, err := s.Store.Group(ctx)
	if err != nil {
		return nil, err
	}
	sg := &spyGroup{Group: g, spy: s.spy}
	if s.spy.onReserve != nil {
		return &reservingGroup{sg}, nil
	}
	return sg, nil
}

// reservingGroup is a spyGroup that is a vault.Reserver.
type reservingGroup struct{ *spyGroup }

func (g *reservingGroup) Reserve(_ context.Context, names []string) error {
	g.spy.mu.Lock()
	g.spy.reserved = append(g.spy.reserved, names)
	g.spy.mu.Unlock()
	return g.spy.onReserve(names)
}

// spyGroup counts the commits of groups that hold writes.
type spyGroup struct {
	vault.Group
	spy  *spy
	adds int
}

func (g *spyGroup) Add(ctx context.Context, w vault.Write, approve vault.Approve) (vault.Meta, error) {
	if g.spy.addsSeen++; g.spy.addsSeen == g.spy.panicOnAdd {
		panic(spyPanic)
	}
	if g.spy.onAdd != nil {
		g.spy.onAdd()
	}
	m, err := g.Group.Add(ctx, w, approve)
	if err == nil {
		g.adds++
	}
	return m, err
}

func (g *spyGroup) Commit(ctx context.Context) error {
	if g.adds == 0 {
		return g.Group.Commit(ctx)
	}
	g.spy.count("commit")
	if g.spy.onCommit != nil {
		g.spy.onCommit()
	}
	if g.spy.commitErr != nil {
		g.Group.Abort()
		return g.spy.commitErr
	}
	err := g.Group.Commit(ctx)
	if g.spy.panicOnCommit {
		panic(spyPanic)
	}
	return err
}

func (s *spyStore) Check(ctx context.Context) (vault.Report, error) {
	s.spy.count("check")
	return s.Store.Check(ctx)
}

// transcript is what one session wrote.
type transcript struct {
	stdout, stderr []string // lines, without their newlines
	rawOut, rawErr []byte
	err            error // what Serve returned
}

// sessionOpts tune one session. The zero value runs with bytes.Buffers for
// stdout and stderr and the context env "".
type sessionOpts struct {
	stdin   io.Reader
	sent    []byte    // the stdin bytes, when known: pairs replies with requests
	stdout  io.Writer // receives stdout as well as the transcript, when set
	stderr  io.Writer // wraps the transcript's stderr buffer, when set
	env     string
	environ []string // the PDP child's allowlist is taken from it
	broken  bool     // the session is expected to break: skip the one-event-per-reply accounting
	// signals reach the session as the process's stop signals would; nil:
	// none ever does (in-process sessions never take the test's signals).
	signals     <-chan os.Signal
	ctx         context.Context  // context.Background() when nil
	interrupted bool             // a signal or ctx ends the session: Serve fails, the accounting holds
	maxGroup    int              // Options.MaxGroup
	maxReads    int              // Options.MaxReads
	clock       func() time.Time // the groups' clock; time.Now when nil
	scrubClock  func() time.Time // the clock scrub streams idle on; time.Now when nil
}

// serve runs a session over stdin with the fixture's config and spy.
func (f *fixture) serve(t testing.TB, stdin string) transcript {
	t.Helper()
	return f.session(t, sessionOpts{stdin: strings.NewReader(stdin), sent: []byte(stdin)})
}

// session runs a whole session in-process and checks everything it wrote
// (see the file comment).
func (f *fixture) session(t testing.TB, o sessionOpts) transcript {
	t.Helper()
	var out, errb lockedBuffer
	var stdout io.Writer = &out
	if o.stdout != nil {
		stdout = io.MultiWriter(&out, o.stdout)
	}
	var stderr io.Writer = &errb
	if o.stderr != nil {
		stderr = o.stderr
	}
	if o.signals == nil {
		o.signals = make(chan os.Signal)
	}
	if o.ctx == nil {
		o.ctx = context.Background()
	}
	err := Serve(o.ctx, Options{
		Stdin: o.stdin, Stdout: stdout, Stderr: stderr,
		Config: f.cfg, Env: o.env, Now: fixedClock, Backends: f.spy, Environ: o.environ, Signals: o.signals,
		MaxGroup: o.maxGroup, MaxReads: o.maxReads, groupClock: o.clock, scrubClock: o.scrubClock,
	})
	tr := transcript{rawOut: out.Bytes(), err: err}
	if o.stderr != nil {
		if b, ok := o.stderr.(interface{ Bytes() []byte }); ok {
			tr.rawErr = b.Bytes()
		}
	} else {
		tr.rawErr = errb.Bytes()
	}
	tr.stdout = splitLines(t, "stdout", tr.rawOut)
	tr.stderr = splitLines(t, "stderr", tr.rawErr)
	acct := tr
	if o.interrupted {
		acct.err = nil // expected; the test checks it
	}
	checkWire(t, acct, o.sent, !o.broken)
	return tr
}

// lockedBuffer is a bytes.Buffer safe to read while a session writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Clone(l.b.Bytes())
}

// splitLines splits output into lines; output that does not end in a
// newline is an error (every line serve writes is whole).
func splitLines(t reporter, name string, b []byte) []string {
	t.Helper()
	if len(b) == 0 {
		return nil
	}
	if b[len(b)-1] != '\n' {
		t.Errorf("%s does not end in a newline: %q", name, tail(b))
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func tail(b []byte) []byte {
	if len(b) > 200 {
		return b[len(b)-200:]
	}
	return b
}

func short(s string) string {
	if len(s) > 300 {
		return s[:300] + fmt.Sprintf("…(%d bytes)", len(s))
	}
	return s
}

// requestLines splits stdin bytes into the lines that get a reply, in order.
func requestLines(sent []byte) [][]byte {
	var lines [][]byte
	for len(sent) > 0 {
		line := sent
		if i := bytes.IndexByte(sent, '\n'); i >= 0 {
			line, sent = sent[:i], sent[i+1:]
		} else {
			sent = nil
		}
		if !blank(line) {
			lines = append(lines, line)
		}
	}
	return lines
}

// response is a decoded stdout line; raw fields keep their bytes.
type response struct {
	ID     json.RawMessage `json:"id"`
	OK     bool            `json:"ok"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Details struct {
			Cause    string         `json:"cause"`
			Approval map[string]any `json:"approval"`
		} `json:"details"`
	} `json:"error"`
	Policy json.RawMessage `json:"policy"`
}

// cause is details.cause of an error reply, "" when none.
func (r response) cause() string {
	if r.Error == nil {
		return ""
	}
	return r.Error.Details.Cause
}

// field is the result's field name, decoded; nil when absent.
func (r response) field(name string) any {
	var m map[string]any
	_ = json.Unmarshal(r.Result, &m)
	return m[name]
}

func (r response) code() string {
	if r.Error == nil {
		return ""
	}
	return r.Error.Code
}

func (r response) message() string {
	if r.Error == nil {
		return ""
	}
	return r.Error.Message
}

// event is a decoded stderr line; raw fields keep their bytes.
type event struct {
	V                 int             `json:"v"`
	TS                string          `json:"ts"`
	Seq               uint64          `json:"seq"`
	Event             string          `json:"event"`
	Op                string          `json:"op"`
	Outcome           string          `json:"outcome"`
	ID                json.RawMessage `json:"id"`
	Actor             string          `json:"actor"`
	AttestationSHA256 string          `json:"attestation_sha256"`
	Env               string          `json:"env"`
	Ref               string          `json:"ref"`
	Version           uint64          `json:"version"`
	Code              string          `json:"code"`
	Message           string          `json:"message"`
	Source            string          `json:"source"`
}

func (tr transcript) responses(t reporter) []response {
	t.Helper()
	rs := make([]response, len(tr.stdout))
	for i, l := range tr.stdout {
		if err := json.Unmarshal([]byte(l), &rs[i]); err != nil {
			t.Fatalf("stdout line %d is not JSON: %v: %s", i+1, err, short(l))
		}
	}
	return rs
}

func (tr transcript) events(t reporter) []event {
	t.Helper()
	es := make([]event, len(tr.stderr))
	for i, l := range tr.stderr {
		if err := json.Unmarshal([]byte(l), &es[i]); err != nil {
			t.Fatalf("stderr line %d is not JSON: %v: %s", i+1, err, short(l))
		}
	}
	return es
}

// requestEvents are the events that answer requests (those with an id), in
// order.
func (tr transcript) requestEvents(t reporter) []event {
	var out []event
	for _, e := range tr.events(t) {
		if e.ID != nil {
			out = append(out, e)
		}
	}
	return out
}

// checkWire holds a session's output to the schemas and, when accounting,
// to one event per reply.
func checkWire(t reporter, tr transcript, sent []byte, accounting bool) {
	t.Helper()
	sc := schemas(t)
	var reqs [][]byte
	if sent != nil {
		reqs = requestLines(sent)
		if len(tr.stdout) > len(reqs) {
			t.Errorf("%d replies to %d request lines", len(tr.stdout), len(reqs))
		}
	}
	var reqEvents []map[string]any
	for i, l := range tr.stderr {
		v, err := parseInstance([]byte(l))
		if err != nil {
			t.Errorf("stderr line %d is not one JSON value: %v: %s", i+1, err, short(l))
			continue
		}
		if err := sc.event.Validate(v); err != nil {
			t.Errorf("stderr line %d does not validate against event: %v\n%s", i+1, err, short(l))
		}
		if m, ok := v.(map[string]any); ok {
			if _, ok := m["id"]; ok {
				reqEvents = append(reqEvents, m)
			}
		}
	}
	for i, l := range tr.stdout {
		v, err := parseInstance([]byte(l))
		if err != nil {
			t.Errorf("stdout line %d is not one JSON value: %v: %s", i+1, err, short(l))
			continue
		}
		if err := sc.response.Validate(v); err != nil {
			t.Errorf("stdout line %d does not validate against response: %v\n%s", i+1, err, short(l))
			continue
		}
		m := v.(map[string]any)
		if m["ok"] == false {
			if err := sc.errorResp.Validate(v); err != nil {
				t.Errorf("stdout line %d does not validate against error: %v\n%s", i+1, err, short(l))
			}
			continue
		}
		op := ""
		if i < len(reqs) {
			op = opOf(reqs[i])
		}
		if op == "" && i < len(reqEvents) {
			op, _ = reqEvents[i]["event"].(string)
		}
		rs, ok := sc.result[op]
		if !ok {
			t.Errorf("stdout line %d is a success for op %q, which has no result schema\n%s", i+1, op, short(l))
			continue
		}
		if err := rs.Validate(m["result"]); err != nil {
			t.Errorf("stdout line %d: result does not validate against result.%s: %v\n%s", i+1, op, err, short(l))
		}
	}
	if accounting {
		checkAccounting(t, tr)
	}
}

// checkAccounting: one event per reply with the reply's id, success events
// named for their op; seq from 1 without gaps; start first, stop last.
func checkAccounting(t reporter, tr transcript) {
	t.Helper()
	es := tr.events(t)
	rs := tr.responses(t)
	for i, e := range es {
		if e.Seq != uint64(i+1) {
			t.Errorf("event %d has seq %d, want %d", i+1, e.Seq, i+1)
		}
		if e.TS != "2026-01-02T03:04:05.000000006Z" {
			t.Errorf("event %d has ts %q, want the fixed clock", i+1, e.TS)
		}
		if e.Source != "serve" {
			t.Errorf("event %d has source %q", i+1, e.Source)
		}
	}
	if len(es) == 0 || es[0].Event != "start" {
		t.Errorf("the first event is not start: %q", tr.stderr)
	}
	if res, err := audittrail.Verify(bytes.NewReader(tr.rawErr), nil); err != nil || res.Streams != 1 || res.MidChain {
		t.Errorf("the events are not one chain from start: %+v, %v", res, err)
	}
	if n := len(es); n == 0 || es[n-1].Event != "stop" {
		t.Errorf("the last event is not stop: %q", tr.stderr)
	}
	if tr.err != nil {
		t.Errorf("serve failed: %v", tr.err)
	}
	reqEvents := tr.requestEvents(t)
	if len(reqEvents) != len(rs) {
		t.Errorf("%d request events for %d replies", len(reqEvents), len(rs))
		return
	}
	for i, r := range rs {
		e := reqEvents[i]
		if !bytes.Equal(e.ID, r.ID) {
			t.Errorf("reply %d has id %s but its event has id %s", i+1, short(string(r.ID)), short(string(e.ID)))
		}
		switch {
		case r.OK && (e.Outcome != "ok" || e.Event == "error" || e.Event == "denied"):
			t.Errorf("reply %d is a success but its event is %s/%s", i+1, e.Event, e.Outcome)
		case !r.OK && e.Code != r.code():
			t.Errorf("reply %d has code %s but its event has code %q", i+1, r.code(), e.Code)
		}
	}
}

// opOf returns the "op" string of a request line, "" when it has none.
func opOf(line []byte) string {
	var m struct {
		Op string `json:"op"`
	}
	if json.Unmarshal(line, &m) != nil {
		return ""
	}
	return m.Op
}

// parseInstance parses one JSON text the way jsonschema expects (numbers as
// json.Number), refusing trailing data.
func parseInstance(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

// schemaSet is the compiled published schemas.
type schemaSet struct {
	request, response, errorResp, event *jsonschema.Schema
	result                              map[string]*jsonschema.Schema // by op
}

var compiledSchemas = sync.OnceValues(compileSchemas)

func schemas(t reporter) *schemaSet {
	t.Helper()
	s, err := compiledSchemas()
	if err != nil {
		t.Fatalf("compile the published schemas: %v", err)
	}
	return s
}

type noLoader struct{}

func (noLoader) Load(url string) (any, error) { return nil, fmt.Errorf("no schema at %s", url) }

// compileSchemas compiles the closed form of each published schema (what
// this build writes, exactly), each alone: with no loader, a $ref outside
// a schema fails to compile.
func compileSchemas() (*schemaSet, error) {
	var err error
	compile := func(name string) *jsonschema.Schema {
		if err != nil {
			return nil
		}
		var b []byte
		if b, err = manifest.ClosedSchema(name); err != nil {
			return nil
		}
		var doc any
		if doc, err = jsonschema.UnmarshalJSON(bytes.NewReader(b)); err != nil {
			return nil
		}
		c := jsonschema.NewCompiler()
		c.UseLoader(noLoader{})
		if err = c.AddResource(manifest.SchemaPrefix+name, doc); err != nil {
			return nil
		}
		sch, cerr := c.Compile(manifest.SchemaPrefix + name)
		if cerr != nil {
			err = fmt.Errorf("%s: %w", name, cerr)
		}
		return sch
	}
	s := &schemaSet{result: map[string]*jsonschema.Schema{}}
	s.request = compile("request")
	s.response = compile("response")
	s.errorResp = compile("error")
	s.event = compile("event")
	for _, op := range manifest.Ops() {
		s.result[op.Name] = compile("result." + op.Name)
	}
	return s, err
}

// wantStop checks that every stderr line is an event, seq without gaps,
// one request event per reply, and the last event stop with message msg.
func wantStop(t *testing.T, tr transcript, msg string) {
	t.Helper()
	es := tr.events(t)
	for i, e := range es {
		if e.Seq != uint64(i+1) {
			t.Errorf("event %d has seq %d", i+1, e.Seq)
		}
	}
	if n := len(es); n == 0 || es[n-1].Event != "stop" || es[n-1].Message != msg {
		t.Errorf("the last event is not stop %q:\n%s", msg, tr.rawErr)
	}
	if n, m := len(tr.requestEvents(t)), len(tr.stdout); n != m {
		t.Errorf("%d request events for %d replies", n, m)
	}
}
