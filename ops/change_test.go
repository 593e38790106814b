package ops

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/manifest"
)

// flushSink keeps what is written to it and what was flushed when, as one
// log of steps, and fails every write once fail is set.
type flushSink struct {
	steps []string // "event KIND OUTCOME" or "flush"
	fail  bool
}

func (s *flushSink) Write(p []byte) (int, error) {
	if s.fail {
		return 0, errors.New("stderr is gone")
	}
	var e audit.Event
	if err := json.Unmarshal(p, &e); err != nil {
		return 0, err
	}
	s.steps = append(s.steps, "event "+e.Event+" "+e.Outcome+" "+e.Op+" "+e.Env+" "+e.Ref+" "+e.Message)
	return len(p), nil
}

func (s *flushSink) Flush() error {
	s.steps = append(s.steps, "flush")
	return nil
}

func changeService(sink *flushSink) *Service {
	return New(Options{Config: &Config{}, Audit: audit.NewWriter(sink, audit.SourceCLI, nil)})
}

// A change is audited, flushed, then committed; a commit that fails gets a
// second event for the same op and env, outcome error.
func TestChangeAuditThenCommitThenFail(t *testing.T) {
	sink := &flushSink{}
	s := changeService(sink)
	ch := s.Begin("rekey", "dev", "", "replace the data key")
	if err := ch.Audit(0); err != nil {
		t.Fatal(err)
	}
	sink.steps = append(sink.steps, "commit")
	err := ch.Fail(Errorf(manifest.OpError, "rekey was audited but did not land"))
	if CodeOf(err) != manifest.OpError || err.Error() != "rekey was audited but did not land" {
		t.Fatalf("Fail returned %v", err)
	}
	want := []string{
		"event rekey ok rekey dev  replace the data key",
		"flush",
		"commit",
		"event error error rekey dev  rekey was audited but did not land",
	}
	if strings.Join(sink.steps, "\n") != strings.Join(want, "\n") {
		t.Fatalf("steps:\n%s\nwant:\n%s", strings.Join(sink.steps, "\n"), strings.Join(want, "\n"))
	}
}

// Audit that cannot write its event says so with op_error wrapping
// ErrAudit: the caller commits nothing.
func TestChangeAuditFailureCommitsNothing(t *testing.T) {
	sink := &flushSink{fail: true}
	s := changeService(sink)
	committed := false
	ch := s.Begin("backup", "dev", "", "3 records to b.arca")
	if err := ch.Audit(0); err == nil {
		committed = true
	} else if !errors.Is(err, ErrAudit) || CodeOf(err) != manifest.OpError {
		t.Fatalf("Audit: %v; want op_error wrapping ErrAudit", err)
	}
	if committed || len(sink.steps) != 0 {
		t.Fatalf("committed %v, steps %q", committed, sink.steps)
	}
	// A Fail that cannot write its event returns the audit failure, not err.
	if err := ch.Fail(Errorf(manifest.OpError, "not written")); !errors.Is(err, ErrAudit) {
		t.Fatalf("Fail: %v; want ErrAudit", err)
	}
}

// Record writes without flushing; the Audit after it flushes the run, so
// no value of a read leaves before every event of it is out.
func TestChangeRecordThenAuditFlushesOnce(t *testing.T) {
	sink := &flushSink{}
	s := changeService(sink)
	if err := s.Begin("get", "dev", "app/a", "").Record(1); err != nil {
		t.Fatal(err)
	}
	if err := s.Begin("get", "dev", "app/b", "").Audit(2); err != nil {
		t.Fatal(err)
	}
	want := []string{"event get ok get dev app/a ", "event get ok get dev app/b ", "flush"}
	if strings.Join(sink.steps, "\n") != strings.Join(want, "\n") {
		t.Fatalf("steps %q, want %q", sink.steps, want)
	}
}

// A refusal is failed alone, and its event says how: denied, bad_request,
// not_found, or error.
func TestChangeFailOutcomes(t *testing.T) {
	for _, tc := range []struct {
		code manifest.Code
		want string
	}{
		{manifest.Denied, "event denied denied put dev app/a no"},
		{manifest.BadRequest, "event error bad_request put dev app/a no"},
		{manifest.NotFound, "event error not_found put dev app/a no"},
		{manifest.OpError, "event error error put dev app/a no"},
	} {
		sink := &flushSink{}
		s := changeService(sink)
		err := s.Begin("put", "dev", "app/a", "").Fail(Errorf(tc.code, "no"))
		if CodeOf(err) != tc.code {
			t.Errorf("%s: Fail returned %v", tc.code, err)
		}
		if len(sink.steps) != 1 || sink.steps[0] != tc.want {
			t.Errorf("%s: steps %q, want [%q]", tc.code, sink.steps, tc.want)
		}
	}
}
