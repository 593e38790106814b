package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/arca-secrets/arca/ops/opstest"
)

// historyCLI runs arca verbs in one HOME on in-memory vaults that follow
// vault.Step, so that the verbs of versions and history are held to what
// they print and exit whatever the state of the real backends.
type historyCLI struct {
	t    *testing.T
	home string
	mem  *opstest.MemBackends
	at   time.Time
}

func newHistoryCLI(t *testing.T) *historyCLI {
	h := &historyCLI{t: t, home: t.TempDir(), mem: &opstest.MemBackends{}, at: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	if out, _, st := h.run("", false, "init"); st != 0 {
		t.Fatalf("init: exit %d: %s", st, out)
	}
	return h
}

// run runs arca args with stdin, a terminal on stdin when tty; it returns
// stdout, stderr and the exit status.
func (h *historyCLI) run(stdin string, tty bool, args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	c := &cli{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb, stdinTTY: tty, backends: h.mem,
		now:     func() time.Time { h.at = h.at.Add(time.Second); return h.at },
		getenv:  func(k string) string { return map[string]string{"HOME": h.home}[k] },
		environ: func() []string { return []string{"HOME=" + h.home} }}
	st := c.main(context.Background(), args)
	return out.String(), errb.String(), st
}

// want runs args and holds them to an exit status and what stdout holds.
func (h *historyCLI) want(st int, stdout string, stdin string, args ...string) string {
	h.t.Helper()
	out, errb, got := h.run(stdin, false, args...)
	if got != st || !strings.Contains(out, stdout) {
		h.t.Errorf("arca %s: exit %d, stdout %q, stderr %q; want exit %d and stdout holding %q", strings.Join(args, " "), got, out, errb, st, stdout)
	}
	return errb
}

// TestHistoryVerbs: the verbs of versions and history, and the flags of
// get, put, rotate, rm and list, say what they did and exit as SPEC §6
// and §10 say (conflict: 5).
func TestHistoryVerbs(t *testing.T) {
	h := newHistoryCLI(t)
	const ref = "arca://app/db"
	h.want(0, "created version 1", "one", "put", "--if-version", "0", ref)
	h.want(0, "updated version 2", "two", "put", ref)
	errb := h.want(5, "", "three", "put", "--if-version", "1", ref)
	if !strings.Contains(errb, "version conflict: the current version is 2") || strings.Contains(errb, "three") {
		t.Errorf("a conflict says %q", errb)
	}
	h.want(5, "", "x", "rotate", "--if-version", "7", ref)
	h.want(0, "one", "", "get", "--version", "1", ref)
	h.want(4, "", "", "get", "--version", "9", ref)
	h.want(2, "", "", "get", "--version", "x", ref)
	h.want(0, "2\tcurrent\t2026-01-02T03:04:", "", "history", ref)
	h.want(0, "rolled back to the value of version 1 as version 3 in env default", "", "rollback", ref, "1")
	h.want(2, "", "", "rollback", ref, "one")
	h.want(5, "", "", "rm", "--if-version", "2", ref)
	h.want(0, "removed from env default (was version 3)", "", "rm", ref)
	h.want(0, "", "", "list")
	if out, _, _ := h.run("", false, "list"); out != "" {
		t.Errorf("list shows a removed secret: %q", out)
	}
	h.want(0, ref+"\t3\t", "", "list", "--deleted")
	h.want(0, "undeleted as version 4 in env default", "", "undelete", ref)
	h.want(4, "", "", "undelete", ref)
	// On a terminal, destroy asks; anything but yes destroys nothing.
	if _, errb, st := h.run("no\n", true, "destroy", "--version", "1", ref); st != 2 || !strings.Contains(errb, "Destroy version 1 of "+ref+"? This cannot be undone.") {
		t.Errorf("destroy answered no: exit %d, %q", st, errb)
	}
	h.want(0, "one", "", "get", "--version", "1", ref)
	if out, _, st := h.run("yes\n", true, "destroy", "--version", "1", "--version", "2", ref); st != 0 || !strings.Contains(out, "destroyed versions 1, 2 for good") {
		t.Errorf("destroy answered yes: exit %d, %q", st, out)
	}
	h.want(4, "", "", "get", "--version", "1", ref)
	h.want(0, "no version of it is left", "", "destroy", ref) // not a terminal: it proceeds
	h.want(0, "cursor\t", "", "changes")
	h.want(2, "", "", "changes", "--since", "bogus")
}

// TestHistoryVerbsJSON: the --json of each verb is serve's result of the
// same op, held to the closed schema.
func TestHistoryVerbsJSON(t *testing.T) {
	h := newHistoryCLI(t)
	const ref = "arca://app/db"
	h.want(0, "", "one", "put", ref)
	h.want(0, "", "two", "put", ref)
	for _, step := range []struct {
		op    string
		args  []string
		stdin string
	}{
		{"get", []string{"get", "--json", "--version", "1", ref}, ""},
		{"history", []string{"history", "--json", ref}, ""},
		{"rollback", []string{"rollback", "--json", ref, "1"}, ""},
		{"rm", []string{"rm", "--json", "--if-version", "3", ref}, ""},
		{"list", []string{"list", "--json", "--deleted"}, ""},
		{"undelete", []string{"undelete", "--json", ref}, ""},
		{"destroy", []string{"destroy", "--json", "--version", "1", ref}, ""},
		{"changes", []string{"changes", "--json"}, ""},
	} {
		out, errb, st := h.run(step.stdin, false, step.args...)
		if st != 0 {
			t.Fatalf("%s: exit %d: %s", step.op, st, errb)
		}
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
		if err != nil {
			t.Fatalf("%s --json is not JSON: %v\n%s", step.op, err, out)
		}
		if err := closedResult(t, step.op).Validate(inst); err != nil {
			t.Errorf("%s --json does not validate against result.%s: %v\n%s", step.op, step.op, err, out)
		}
	}
}
