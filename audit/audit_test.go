package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestAppendEventMatchesEncodingJSON(t *testing.T) {
	events := []Event{
		{V: 1, TS: "2026-01-01T00:00:00.000000000Z", Seq: 1, Event: "start", Source: SourceServe},
		{V: 1, TS: "t", Seq: 7, Event: "get", Op: "get", Outcome: OK, ID: json.RawMessage(`{"a":[1,"x"]}`),
			Actor: "agent:\"quoted\"\\", Client: "c", User: "ana \"x\"", Host: "build-1", AttestationSHA256: HashAttestation("x"), Env: "prod", Ref: "ns/name", Version: 3, Source: SourceCLI},
		{V: 1, Event: "get", Op: "get", Outcome: OK, Ref: "ns/name", Policy: &Policy{Allow: true, Obligations: []string{"arca:max_uses=3"}},
			Grant: "gr_0123abcd", Source: SourceServe},
		{V: 1, Event: "grant.close", Op: "get", Outcome: OK, Message: "exhausted", Grant: "gr_\"x\"", Source: SourceServe},
		{V: 1, Event: "approval.decide", Op: "put", Outcome: OK, Source: SourceServe,
			Approval: &Approval{ID: "ap_1", Fingerprint: "ab", Decision: "grant", Approver: "alice \"<x>\"", Via: "page", Uses: 3, TTLS: 600}},
		{V: 1, Event: "put", Op: "put", Outcome: OK, Source: SourceServe, Approval: &Approval{ID: "ap_2"}, Grant: "gr_1"},
		{V: 1, Event: "denied", Op: "put", Outcome: Denied, Code: "denied", Message: "denied by policy: <no> & \u2028 \x01 é \xff",
			Policy: &Policy{Allow: false, Reason: "r\n", Obligations: []string{"a", "b\t"}, Degraded: true}, Source: SourceServe},
		{V: 1, Event: "error", Policy: &Policy{Allow: true}, ID: json.RawMessage(`null`)},
		{V: 1, Event: "http", Op: "http", Outcome: OK, Ref: "ci/token", Version: 2, Source: SourceServe,
			Use: &Use{Service: "github", Method: "GET", Path: "/repos/\"x\"", Via: "op", Status: 200, BytesIn: 3, BytesOut: 1024, ElapsedMS: 12, Redactions: 1}},
		{V: 1, Event: "exec", Op: "exec", Outcome: OK, Source: SourceServe, Use: &Use{Action: "migrate", ExitCode: new(int), Via: "op"}},
		{V: 1, Event: "error", Op: "http", Outcome: Error, Code: "upstream_failed", Message: "m", Source: SourceServe,
			Use: &Use{Service: "s", Method: "POST", Path: "/", Via: "proxy", Cause: "blocked_address"}},
	}
	for i, e := range events {
		got := appendEvent(nil, &e, nil, time.Time{}, nil)
		want, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("event %d: %s is not JSON: %v", i, got, err)
		}
		if err := json.Unmarshal(want, &w); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("event %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

func TestWriterNumbersAndStamps(t *testing.T) {
	var buf bytes.Buffer
	now := time.Date(2026, 3, 4, 5, 6, 7, 800, time.FixedZone("x", 3600))
	w := NewWriter(&buf, SourceServe, func() time.Time { return now })
	for range 3 {
		if err := w.Write(Event{Event: "get", Source: "ignored"}); err != nil {
			t.Fatal(err)
		}
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines", len(lines))
	}
	for i, l := range lines {
		var e Event
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatal(err)
		}
		if e.Seq != uint64(i+1) || e.V != 1 || e.Source != SourceServe || e.TS != "2026-03-04T04:06:07.000000800Z" {
			t.Errorf("line %d = %+v", i, e)
		}
	}
}

type brokenSink struct{ flushes int }

func (b *brokenSink) Write(p []byte) (int, error) { return len(p), nil }
func (b *brokenSink) Flush() error                { b.flushes++; return errors.New("EPIPE") }

func TestWriteFlushReportsAFailedFlush(t *testing.T) {
	s := &brokenSink{}
	w := NewWriter(s, SourceServe, nil)
	if err := w.Write(Event{Event: "get"}); err != nil || s.flushes != 0 {
		t.Fatalf("Write flushed (%d) or failed: %v", s.flushes, err)
	}
	if err := w.WriteFlush(Event{Event: "put"}); err == nil || s.flushes != 1 {
		t.Fatalf("WriteFlush: err %v after %d flushes; want an error after one", err, s.flushes)
	}
}

func TestWriteFailureLeavesNoGap(t *testing.T) {
	var buf bytes.Buffer
	fail := true
	w := NewWriter(writerFunc(func(p []byte) (int, error) {
		if fail {
			return 0, errors.New("closed")
		}
		return buf.Write(p)
	}), SourceCLI, nil)
	if err := w.Write(Event{Event: "get"}); err == nil {
		t.Fatal("a failed write reported success")
	}
	fail = false
	if err := w.Write(Event{Event: "get"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"seq":1,`) {
		t.Fatalf("seq after a failed write: %s", buf.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestFormatTimeMatchesLayout(t *testing.T) {
	for _, tm := range []time.Time{
		time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC),
		time.Date(1999, 12, 31, 23, 59, 59, 999999999, time.FixedZone("x", -7*3600)),
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(12345, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Unix(0, 0),
	} {
		if got, want := FormatTime(tm), tm.UTC().Format(TimeFormat); got != want {
			t.Errorf("FormatTime(%v) = %s, want %s", tm, got, want)
		}
	}
}

// The audit file is a regular file, or a link to one: events are appended
// to it and synced.
func TestOpenFileAppendsToARegularFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "logs", "audit.log")
	link := filepath.Join(dir, "link.log")
	for i, p := range []string{path, link} {
		if i == 1 {
			if err := os.Symlink(path, link); err != nil {
				t.Fatal(err)
			}
		}
		f, err := OpenFile(p)
		if err != nil {
			t.Fatalf("OpenFile(%s): %v", p, err)
		}
		w := NewWriter(f, SourceCLI, nil)
		if err := w.WriteFlush(Event{Event: "put"}); err != nil {
			t.Fatalf("%s: WriteFlush: %v", p, err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil || strings.Count(string(b), `"event":"put"`) != 2 {
		t.Fatalf("audit file %q, %v; want two events", b, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v; want 0600", fi.Mode(), err)
	}
}

// A target that cannot be a durable trail is refused when it is opened,
// never accepted to fail at the first sync: /dev/null, a FIFO with or
// without a reader (never waited on), a socket, a directory.
func TestOpenFileRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "events.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "events.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	tests := []struct{ name, path, want string }{
		{"/dev/null", "/dev/null", "audit file /dev/null is a character device: the audit trail must be a regular file (to ship events elsewhere, follow the file)"},
		{"FIFO without a reader", fifo, "audit file " + fifo + " is a FIFO: the audit trail must be a regular file (to ship events elsewhere, follow the file)"},
		{"socket", sock, "audit file " + sock + " is a socket: the audit trail must be a regular file"},
		{"directory", dir, "open audit file: open " + dir + ": is a directory"},
	}
	for _, tc := range tests {
		f, err := OpenFile(tc.path)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			if f != nil {
				f.Close()
			}
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	// With a reader, the FIFO opens, and is refused all the same; the
	// reader sees nothing but its end.
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if f, err := OpenFile(fifo); err == nil || !strings.Contains(err.Error(), "is a FIFO") {
		if f != nil {
			f.Close()
		}
		t.Errorf("FIFO with a reader: %v, want it refused", err)
	}
	if n, err := r.Read(make([]byte, 1)); n != 0 || err == nil {
		t.Errorf("the FIFO's reader got %d bytes, %v", n, err)
	}
}
