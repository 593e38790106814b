package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestAppendEventMatchesEncodingJSON(t *testing.T) {
	events := []Event{
		{V: 1, TS: "2026-01-01T00:00:00.000000000Z", Seq: 1, Event: "start", Source: SourceServe},
		{V: 1, TS: "t", Seq: 7, Event: "get", Op: "get", Outcome: OK, ID: json.RawMessage(`{"a":[1,"x"]}`),
			Actor: "agent:\"quoted\"\\", AttestationSHA256: HashAttestation("x"), Env: "prod", Ref: "ns/name", Version: 3, Source: SourceCLI},
		{V: 1, Event: "denied", Op: "put", Outcome: Denied, Code: "denied", Message: "denied by policy: <no> & \u2028 \x01 é \xff",
			Policy: &Policy{Allow: false, Reason: "r\n", Obligations: []string{"a", "b\t"}, Degraded: true}, Source: SourceServe},
		{V: 1, Event: "error", Policy: &Policy{Allow: true}, ID: json.RawMessage(`null`)},
	}
	for i, e := range events {
		got := appendEvent(nil, &e, time.Time{})
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

func TestAppendStringRoundTrips(t *testing.T) {
	for _, s := range []string{"", "plain", "\"\\/", "\x00\x1f\x7f", "日本語", "\u2028\u2029", "a\r\nb", strings.Repeat("é", 100)} {
		b := AppendString(nil, s)
		var back string
		if err := json.Unmarshal(b, &back); err != nil || back != s {
			t.Errorf("%q: encoded %s decodes to %q (%v)", s, b, back, err)
		}
		if bytes.ContainsAny(b, "\n\r\u2028") {
			t.Errorf("%q: encoding %s holds a line break", s, b)
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
