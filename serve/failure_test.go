package serve

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
)

// TestPanicIsRecovered: a panic in one request is answered op_error with
// its event, the loop serves the next request, and stderr stays JSON event
// lines with no trace and no panic value.
func TestPanicIsRecovered(t *testing.T) {
	f := newFixture(t)
	f.spy.panicOnGet = true
	tr := f.serve(t, lines(
		`{"op":"put","ref":"arca://app/db","value":"v","id":1}`,
		`{"op":"get","ref":"arca://app/db","id":2}`,
		`{"op":"list","id":3}`,
		`{"op":"get","ref":"arca://app/db","id":4}`,
		`{"op":"manifest","id":5}`,
	))
	internal := want{code: "op_error", msg: "internal error while handling the request"}
	internal2, internal4 := internal, internal
	internal2.id, internal4.id = "2", "4"
	checkReplies(t, tr, []want{ok("1"), internal2, ok("3"), internal4, ok("5")})
	for _, out := range []string{string(tr.rawErr), string(tr.rawOut)} {
		for _, s := range []string{spyPanic, "goroutine", "panic(", ".go:"} {
			if strings.Contains(out, s) {
				t.Errorf("output holds %q:\n%s", s, out)
			}
		}
	}
	for _, e := range tr.requestEvents(t) {
		if string(e.ID) == "2" && (e.Event != "error" || e.Op != "get" || e.Code != "op_error" || e.Outcome != "error") {
			t.Errorf("the panicked request's event is %+v", e)
		}
	}
}

// failingWriter accepts its first ok writes, then fails every write.
type failingWriter struct {
	mu     sync.Mutex
	ok     int
	writes int
	buf    bytes.Buffer
	fail   bool // set by the test to fail from now on
}

func (w *failingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes++
	if w.fail || w.writes > w.ok {
		return 0, errors.New("stderr is gone")
	}
	return w.buf.Write(p)
}

func (w *failingWriter) Bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Clone(w.buf.Bytes())
}

const brokenValue = "BROKEN-WIRE-VALUE-4a7c"

// seed stores brokenValue at arca://app/db through a healthy session.
func seed(t *testing.T, f *fixture) {
	t.Helper()
	tr := f.serve(t, lines(`{"op":"put","ref":"arca://app/db","value":"`+brokenValue+`"}`))
	checkReplies(t, tr, []want{ok("null")})
}

func brokenSession(t *testing.T, f *fixture, okWrites int, in string) (transcript, *failingWriter) {
	t.Helper()
	w := &failingWriter{ok: okWrites}
	tr := f.session(t, sessionOpts{stdin: strings.NewReader(in), sent: []byte(in), stderr: w, broken: true})
	if tr.err == nil {
		t.Errorf("serve returned nil with a broken stderr")
	}
	if strings.Contains(string(tr.rawOut), brokenValue) {
		t.Errorf("a value reached stdout while its event could not be written:\n%s", tr.rawOut)
	}
	return tr, w
}

var wireGone = want{code: "op_error", msg: "the audit wire (stderr) failed"}

func wireGoneID(id string) want { w := wireGone; w.id = id; return w }

// TestBrokenStderr: once stderr fails serve answers the requests whose
// events could not be written op_error, withholds every value, commits
// nothing, and exits non-zero.
func TestBrokenStderr(t *testing.T) {
	t.Run("get withholds the value", func(t *testing.T) {
		f := newFixture(t)
		seed(t, f)
		tr, w := brokenSession(t, f, 1, lines(`{"op":"get","ref":"arca://app/db","id":7}`))
		checkReplies(t, tr, []want{wireGoneID("7")})
		if len(tr.stderr) != 1 || !strings.Contains(tr.stderr[0], `"event":"start"`) {
			t.Errorf("stderr holds %q, want only the start event", tr.stderr)
		}
		if w.writes < 2 {
			t.Errorf("serve never tried to write the get's event")
		}
	})
	t.Run("pipelined requests are all answered op_error", func(t *testing.T) {
		f := newFixture(t)
		seed(t, f)
		tr, _ := brokenSession(t, f, 1, lines(
			`{"op":"get","ref":"arca://app/db","id":1}`,
			`{"op":"list","id":2}`,
			`{"op":"nope","id":3}`,
		))
		checkReplies(t, tr, []want{wireGoneID("1"), wireGoneID("2"), wireGoneID("3")})
	})
	t.Run("put is not committed", func(t *testing.T) {
		f := newFixture(t)
		tr, _ := brokenSession(t, f, 1, lines(`{"op":"put","ref":"arca://app/new","value":"`+brokenValue+`","id":1}`))
		checkReplies(t, tr, []want{{id: "1", code: "op_error"}})
		after := f.serve(t, lines(`{"op":"get","ref":"arca://app/new","id":1}`, `{"op":"list","id":2}`))
		checkReplies(t, after, []want{{id: "1", code: "not_found"}, ok("2")})
		if rs := after.responses(t); len(rs) == 2 && !strings.Contains(string(rs[1].Result), `"records":[]`) {
			t.Errorf("the vault holds a record after an unaudited put: %s", rs[1].Result)
		}
	})
	t.Run("rotate and rm are not committed", func(t *testing.T) {
		f := newFixture(t)
		seed(t, f)
		tr, _ := brokenSession(t, f, 1, lines(`{"op":"rotate","ref":"arca://app/db","value":"other","id":1}`))
		checkReplies(t, tr, []want{{id: "1", code: "op_error"}})
		tr, _ = brokenSession(t, f, 1, lines(`{"op":"rm","ref":"arca://app/db","id":1}`))
		checkReplies(t, tr, []want{{id: "1", code: "op_error"}})
		after := f.serve(t, lines(`{"op":"get","ref":"arca://app/db","id":1}`))
		checkReplies(t, after, []want{ok("1")})
		if rs := after.responses(t); len(rs) == 1 && !strings.Contains(string(rs[0].Result), `"version":1,`) {
			t.Errorf("an unaudited change was committed: %s", rs[0].Result)
		}
	})
	t.Run("stderr gone at start", func(t *testing.T) {
		f := newFixture(t)
		tr, _ := brokenSession(t, f, 0, lines(`{"op":"list","id":1}`))
		if len(tr.stdout) != 0 || len(tr.stderr) != 0 {
			t.Errorf("stdout %q stderr %q, want nothing", tr.stdout, tr.stderr)
		}
		if f.spy.touched() != 0 {
			t.Errorf("the vault was reached without an audit wire")
		}
	})
}

// TestBrokenStderrMidSession drives a session over pipes: the first request
// is answered, then stderr fails; the next request is answered op_error and
// serve exits non-zero without waiting for stdin to close.
func TestBrokenStderrMidSession(t *testing.T) {
	f := newFixture(t)
	seed(t, f)
	w := &failingWriter{ok: 1 << 30}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	type result struct {
		replies []string
		err     error
	}
	done := make(chan result)
	go func() {
		var res result
		defer func() { done <- res }()
		defer inW.Close() // after serve has exited, or on a client error
		br := bufio.NewReader(outR)
		if _, res.err = io.WriteString(inW, `{"op":"manifest","id":1}`+"\n"); res.err != nil {
			return
		}
		l, err := br.ReadString('\n')
		if res.replies, res.err = append(res.replies, l), err; err != nil {
			return
		}
		w.mu.Lock()
		w.fail = true
		w.mu.Unlock()
		if _, res.err = io.WriteString(inW, `{"op":"get","ref":"arca://app/db","id":2}`+"\n"); res.err != nil {
			return
		}
		for {
			l, err := br.ReadString('\n')
			if err != nil {
				if !errors.Is(err, io.EOF) {
					res.err = err
				}
				return
			}
			res.replies = append(res.replies, l)
		}
	}()
	tr := f.session(t, sessionOpts{stdin: inR, stdout: outW, stderr: w, broken: true})
	outW.Close()
	res := <-done
	if res.err != nil {
		t.Fatalf("client: %v", res.err)
	}
	if tr.err == nil {
		t.Errorf("serve returned nil with a broken stderr")
	}
	checkReplies(t, tr, []want{ok("1"), wireGoneID("2")})
	if len(res.replies) != 2 {
		t.Errorf("client read %d replies, want 2", len(res.replies))
	}
	if strings.Contains(string(tr.rawOut), brokenValue) {
		t.Errorf("the value reached stdout without its event")
	}
	if n := len(tr.stderr); n != 2 {
		t.Errorf("stderr holds %d events, want start and the manifest's", n)
	}
}

// TestRepliesFlushedBeforeBlocking drives a session one request at a time
// over pipes: each reply must arrive before the next request is written, or
// the session deadlocks (and the test times out).
func TestRepliesFlushedBeforeBlocking(t *testing.T) {
	f := newFixture(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	sent := []string{
		`{"op":"put","ref":"arca://app/a","value":"1","id":1}`,
		"",
		`{"op":"get","ref":"arca://app/a","id":2}`,
		" \t\r",
		`{"op":"nope","id":3}`,
		`{"op":"list","id":4}`,
	}
	errc := make(chan error, 1)
	go func() {
		errc <- func() error {
			defer inW.Close()
			br := bufio.NewReader(outR)
			for _, s := range sent {
				if s == "" || blank([]byte(s)) {
					if _, err := io.WriteString(inW, s+"\n"); err != nil {
						return err
					}
					continue
				}
				// Half a line first: serve must wait for the rest.
				half := len(s) / 2
				if _, err := io.WriteString(inW, s[:half]); err != nil {
					return err
				}
				if _, err := io.WriteString(inW, s[half:]+"\n"); err != nil {
					return err
				}
				if _, err := br.ReadString('\n'); err != nil {
					return err
				}
			}
			return nil
		}()
		io.Copy(io.Discard, outR)
	}()
	tr := f.session(t, sessionOpts{stdin: inR, stdout: outW, sent: []byte(strings.Join(sent, "\n") + "\n")})
	outW.Close()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	checkReplies(t, tr, []want{ok("1"), ok("2"), unknownOp("3", "unknown op"), ok("4")})
}

// TestRefusalsRecordAttestationHash: a request refused before its op runs
// (by ops: a missing, refused or empty field; by serve: an unknown op)
// records the attestation's hash, whichever refused it (SPEC §8: attestation_sha256 "if an
// attestation was sent").
func TestRefusalsRecordAttestationHash(t *testing.T) {
	f := newFixture(t)
	const att = `"attestation":"ATT-REFUSED"`
	tr := f.serve(t, lines(
		`{"op":"get","ref":"","id":1,`+att+`}`,                      // refused by ops
		`{"op":"get","id":2,`+att+`}`,                               // refused by ops: no ref
		`{"op":"get","ref":"arca://a/b","value":"","id":3,`+att+`}`, // refused by ops: value
		`{"op":"nope","id":4,`+att+`}`,                              // refused by serve: unknown op
	))
	checkReplies(t, tr, []want{bad("1", "ref is empty"), bad("2", "needs"), bad("3", "takes no"), unknownOp("4", "unknown op")})
	sum := hashOf("ATT-REFUSED")
	for _, e := range tr.requestEvents(t) {
		if e.AttestationSHA256 != sum {
			t.Errorf("event for id %s has attestation_sha256 %q, want %s", e.ID, e.AttestationSHA256, sum)
		}
	}
}

// failingReader returns data, then err.
type failingReader struct {
	data []byte
	err  error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

// TestStdinFails: a read error on stdin ends the session after answering
// every whole line; the partial line is not answered, the stop event says
// stdin failed, and serve returns an error.
func TestStdinFails(t *testing.T) {
	f := newFixture(t)
	in := lines(`{"op":"manifest","id":1}`, `{"op":"list","id":2}`) + `{"op":"list","id":3`
	tr := f.session(t, sessionOpts{
		stdin: &failingReader{data: []byte(in), err: errors.New("input/output error")},
		sent:  []byte(in), broken: true, // no clean stop: accounting would want a nil error
	})
	if tr.err == nil {
		t.Errorf("serve returned nil after stdin failed")
	}
	checkReplies(t, tr, []want{ok("1"), ok("2")})
	es := tr.events(t)
	if last := es[len(es)-1]; last.Event != "stop" || !strings.Contains(last.Message, "stdin") {
		t.Errorf("last event %+v, want stop naming stdin", last)
	}
	if n := len(tr.requestEvents(t)); n != 2 {
		t.Errorf("%d request events, want 2", n)
	}
}

// TestRefusesToStart: a context env that does not resolve, or an approval
// page without its approver's token, stops serve before it reads a
// request: one stop event naming the problem, nothing on stdout, an
// error, and a configured PDP's command line never echoed, nor a token.
func TestRefusesToStart(t *testing.T) {
	const pdp = `
[serve.pdp]
exec = "PDP-COMMAND-LINE --token t0ps3cret"
`
	const page = "[serve.approvals]\nlisten = \"127.0.0.1:0\"\n"
	cases := []struct {
		name, toml, env, msg string
		environ              []string
	}{
		{"unknown context env", "", "zzz", `cannot start: unknown env "zzz"`, nil},
		{"invalid context env", "", "../x", "cannot start: invalid env", nil},
		{"unknown context env, a PDP configured", pdp, "zzz", `cannot start: unknown env "zzz"`, nil},
		{"an approval page, no token", page, "", "cannot start: approval page: no approver token: set $ARCA_APPROVER_TOKEN", nil},
		{"an approval page, a short token", page, "", "cannot start: approval page: $ARCA_APPROVER_TOKEN: the token is 9 bytes",
			[]string{"ARCA_APPROVER_TOKEN=t0ps3cret"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixtureConfig(t, c.toml)
			in := lines(`{"op":"manifest","id":1}`, `{"op":"list","id":2}`)
			tr := f.session(t, sessionOpts{stdin: strings.NewReader(in), sent: []byte(in), env: c.env, broken: true, environ: c.environ})
			if tr.err == nil {
				t.Errorf("serve returned nil")
			}
			if len(tr.stdout) != 0 {
				t.Errorf("stdout %q, want nothing", tr.stdout)
			}
			es := tr.events(t)
			if len(es) != 1 || es[0].Event != "stop" || !strings.HasPrefix(es[0].Message, c.msg) {
				t.Errorf("stderr %q, want one stop event %q", tr.stderr, c.msg)
			}
			if strings.Contains(string(tr.rawErr), "PDP-COMMAND-LINE") || strings.Contains(string(tr.rawErr), "t0ps3cret") {
				t.Errorf("the PDP command line or the token reached stderr")
			}
			if f.spy.touched() != 0 {
				t.Errorf("the vault was reached")
			}
		})
	}
}

// TestServeResult: Serve returns nil after a clean stop, and an error
// (which arca maps to op_error, exit 1) whenever it fails: broken stderr,
// failed stdin, or a session that cannot start.
func TestServeResult(t *testing.T) {
	f := newFixture(t)
	in := lines(`{"op":"manifest","id":1}`)
	cases := []struct {
		name   string
		stdin  io.Reader
		stderr io.Writer
		env    string
		fails  bool
	}{
		{"eof", strings.NewReader(in), io.Discard, "", false},
		{"shutdown", strings.NewReader(lines(`{"op":"shutdown"}`, `{"op":"list"}`)), io.Discard, "", false},
		{"broken stderr", strings.NewReader(in), &failingWriter{ok: 1}, "", true},
		{"stdin fails", &failingReader{data: []byte(in), err: errors.New("input/output error")}, io.Discard, "", true},
		{"cannot start", strings.NewReader(in), io.Discard, "zzz", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Serve(context.Background(), Options{Stdin: c.stdin, Stdout: io.Discard, Stderr: c.stderr,
				Config: f.cfg, Env: c.env, Now: fixedClock, Backends: f.spy})
			if (err != nil) != c.fails {
				t.Errorf("Serve = %v, want failure %t", err, c.fails)
			}
		})
	}
}
