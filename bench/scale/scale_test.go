package main

import (
	"bytes"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arca-secrets/arca/vault/etcd/etcdtest/launch"
)

func TestParseFlags(t *testing.T) {
	parse := func(args ...string) (options, error) {
		fs := flag.NewFlagSet("scale", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		return parseFlags(fs, args)
	}
	o, err := parse("-arca", "x")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(o.sessions, []int{1, 4, 16}) || !slices.Equal(o.depths, []int{64, 1}) ||
		!slices.Equal(o.loads, []load{putOwn, putShared, getSeeded}) ||
		o.duration != 10*time.Second || o.timeout != 5*time.Second || o.allowErrors {
		t.Errorf("defaults: %+v", o)
	}
	if o, err = parse("-arca", "x", "-sessions", "16,1", "-depths", "8", "-loads", "get,own", "-duration", "500ms"); err != nil ||
		!slices.Equal(o.sessions, []int{16, 1}) || !slices.Equal(o.depths, []int{8}) ||
		!slices.Equal(o.loads, []load{getSeeded, putOwn}) || o.duration != 500*time.Millisecond {
		t.Errorf("given: %+v, %v", o, err)
	}
	for _, bad := range [][]string{
		{},                      // no -arca
		{"-arca", "x", "extra"}, // an argument
		{"-arca", "x", "-sessions", "0"},
		{"-arca", "x", "-sessions", "1,,4"},
		{"-arca", "x", "-sessions", "4,4"},
		{"-arca", "x", "-depths", "1025"},
		{"-arca", "x", "-depths", "-1"},
		{"-arca", "x", "-loads", "put"},
		{"-arca", "x", "-loads", "get,get"},
		{"-arca", "x", "-duration", "0s"},
		{"-arca", "x", "-timeout", "1500us"}, // timeout_ms is whole milliseconds
		{"-arca", "x", "-timeout", "11m"},
	} {
		if _, err := parse(bad...); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestParseCPUTime(t *testing.T) {
	// pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime ...
	d, err := parseCPUTime("42 (etcd (x) y) S 1 42 42 0 -1 4194560 10 0 0 0 250 130 0 0 20 0 9 0\n")
	if err != nil || d != 3800*time.Millisecond {
		t.Errorf("got %v, %v; want 3.8s", d, err)
	}
	for _, bad := range []string{"", "42 etcd S 1", "42 (etcd) S 1 2 3", "42 (etcd) S 1 42 42 0 -1 0 10 0 0 0 x 130 0"} {
		if _, err := parseCPUTime(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestPlanHasWhatTheRatiosNeed: with the default flags, every ratio of
// the report finds its measurements.
func TestPlanHasWhatTheRatiosNeed(t *testing.T) {
	o := options{sessions: []int{1, 4, 16}, depths: []int{64, 1}, loads: loads(), duration: time.Second}
	var rs []result
	for _, m := range plan(o.sessions, o.depths, o.loads) {
		rs = append(rs, result{m: m, duration: time.Second, tally: tally{sent: 1, ok: 1, inWindow: 1}, etcdCPU: -1})
	}
	if len(rs) != 27 {
		t.Errorf("%d measurements, want 27", len(rs))
	}
	gets := plan(o.sessions, o.depths, []load{getSeeded})
	if len(gets) != 12 || slices.ContainsFunc(gets, func(m measurement) bool { return m.load != getSeeded }) {
		t.Errorf("-loads get: %v", gets)
	}
	var b bytes.Buffer
	printRatios(&b, o, rs)
	out := b.String()
	if strings.Contains(out, "not measured") || strings.Count(out, "\n") != 5 {
		t.Errorf("ratios:\n%s", out)
	}
}

// TestRatios: each target is met at its bound and missed just under it,
// and the shared record's target fails on a single late answer.
func TestRatios(t *testing.T) {
	o := options{sessions: []int{1, 16}, depths: []int{64}, duration: time.Second}
	at := func(bare bool, l load, lanes, depth, n int) result {
		return result{m: measurement{bare, l, lanes, depth}, duration: time.Second, tally: tally{sent: n, ok: n, inWindow: n}}
	}
	report := func(own16, shared16Late, get1 int) string {
		shared := at(false, putShared, 16, 64, 10)
		shared.late = shared16Late
		rs := []result{
			at(true, putOwn, 16, 1, 1000), at(false, putOwn, 1, 64, 100), at(false, putOwn, 16, 64, own16), shared,
			at(true, getSeeded, 1, 64, 1000), at(false, getSeeded, 1, 64, get1),
		}
		var b bytes.Buffer
		printRatios(&b, o, rs)
		return b.String()
	}
	met := report(500, 0, 600)
	if strings.Contains(met, "NOT MET") || strings.Count(met, ": met") != 4 {
		t.Errorf("at the bounds:\n%s", met)
	}
	if missed := report(299, 1, 599); strings.Count(missed, "NOT MET") != 4 {
		t.Errorf("under the bounds:\n%s", missed)
	}
}

// fakeServe writes a shell script that stands for arca serve: body reads
// the request lines on stdin.
func fakeServe(t *testing.T, body string) home {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "arca")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return home{bin: bin, dir: dir}
}

// answerEach answers every request line with reply, in which $id is the
// request's id.
func answerEach(reply string) string {
	return `while IFS= read -r l; do id=${l#*'"id":'}; id=${id%%,*}; ` + reply + `; done` + "\n"
}

// TestDriveChecksEveryAnswer: a session's answers are counted by what
// they are, and an answer to another request, a late answer or none at
// all is an error.
func TestDriveChecksEveryAnswer(t *testing.T) {
	get := measurement{load: getSeeded, lanes: 1, depth: 4}
	cases := []struct {
		name     string
		script   string
		deadline time.Duration
		check    func(tally) bool
		first    string
	}{
		{"ok", answerEach(`echo "{\"id\":$id,\"ok\":true,\"result\":{\"value\":\"` + value + `\"}}"`), time.Second,
			func(t tally) bool { return t.ok == t.sent && t.ok > 0 && t.errors() == 0 }, ""},
		{"not ok", answerEach(`echo "{\"id\":$id,\"ok\":false,\"error\":{\"code\":\"op_error\",\"message\":\"boom\"}}"`), time.Second,
			func(t tally) bool {
				return t.notOK["op_error"] == t.sent && t.firstOf["op_error"] == "boom" && t.ok == 0 && t.sent > 0
			}, "op_error: boom"},
		{"wrong value", answerEach(`echo "{\"id\":$id,\"ok\":true,\"result\":{\"value\":\"other\"}}"`), time.Second,
			func(t tally) bool { return t.notOK["wrong value"] == t.sent && t.sent > 0 }, "wrong value"},
		{"late", answerEach(`sleep 0.2; echo "{\"id\":$id,\"ok\":true,\"result\":{\"value\":\"` + value + `\"}}"`), 100 * time.Millisecond,
			func(t tally) bool { return t.late == t.sent && t.ok == t.sent && t.sent > 0 }, "past the deadline"},
		{"another id", answerEach(`echo "{\"id\":7$id,\"ok\":true}"`), time.Second,
			func(t tally) bool { return t.unanswered == t.sent && t.ok == 0 && t.sent > 0 }, "where 1 was due"},
		{"no answer", "cat >/dev/null\n", time.Second,
			func(t tally) bool { return t.unanswered == t.sent && t.sent == 4 }, "no answer to request 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := fakeServe(t, c.script).serve()
			if err != nil {
				t.Fatal(err)
			}
			got := s.drive(get, 0, time.Now().Add(300*time.Millisecond), c.deadline)
			if !c.check(got) || !strings.Contains(got.firstErr, c.first) {
				t.Errorf("sent %d, ok %d, not ok %v, late %d, unanswered %d; first error %q (want %q)",
					got.sent, got.ok, got.notOK, got.late, got.unanswered, got.firstErr, c.first)
			}
			var b bytes.Buffer
			if n := printErrors(&b, []result{{m: get, tally: got}}); (n == 1) != (c.first != "") || (n == 1) != strings.Contains(b.String(), "ERRORS") {
				t.Errorf("printErrors: %d, %q", n, b.String())
			}
		})
	}
}

// TestRunOnACluster runs the whole program, briefly, on its own cluster:
// every measurement answers, and none with an error. It needs etcd
// (Debian's etcd-server).
func TestRunOnACluster(t *testing.T) {
	if _, err := launch.LookBinary(); err != nil {
		t.Skipf("skipped, not passed: no etcd binary to start a cluster of: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "arca")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/arca").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	o := options{arca: bin, sessions: []int{1, 2}, depths: []int{4}, loads: loads(), duration: 200 * time.Millisecond, timeout: 5 * time.Second}
	var b bytes.Buffer
	rs, err := run(o, &b)
	out := b.String()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	for _, r := range rs {
		if r.ok == 0 || r.errors() > 0 {
			t.Errorf("%s: %d ok, %d errors (first: %s)", r.m, r.ok, r.errors(), r.firstErr)
		}
	}
	if rows := strings.Count(out, "\narca serve ") + strings.Count(out, "\nbare client "); rows != len(plan(o.sessions, o.depths, o.loads)) {
		t.Errorf("%d rows, want one per measurement:\n%s", rows, out)
	}
	if strings.Contains(out, "not measured") || !strings.Contains(out, "2 sessions putting one shared record (4 in flight)") {
		t.Errorf("ratios:\n%s", out)
	}
}
