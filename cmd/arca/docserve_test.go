package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// The serve sessions of the docs are run too. A block marked
//
//	<!-- serve [clock=T] [exit=N] [lockstep] [ARGS...] -->
//
// holds JSON lines: the requests (lines with no "ok" and no "event", a
// malformed one too), the responses ("ok") and the audit events ("event")
// of one arca serve session, run in a fresh HOME after arca init, with the
// docs' files, as arca serve ARGS. Its stdout must be the responses shown,
// exactly, in order (a block that shows requests and no response shows
// only the audit wire); each event shown must be on its stderr, exactly,
// in the order shown (a block need not show every event). A "…" in a line
// stands for any run of its characters, as in examples, a number too (an
// elapsed time, which no two runs print the same). clock=T stops
// arca's clock at T; exit=N is serve's exit status (else 0). A mark that
// goes on to more lines before its "-->" holds commands run first, as a
// console session whose output is not shown: what the session finds in
// the vault. The sessions find in $DOC_UPSTREAM the URL of a service
// they may call (docUpstream), and in $DOC_OPA the URL of an OPA server
// that serves the docs' policies (docOPA). A block may also hold
// commands ("$ CMD") run while serve runs, with what they print, and
// the mark's word lockstep has the requests sent one at a time, each
// once the one before it is answered: see dochost_test.go.
func TestDocServe(t *testing.T) {
	dir := sessionScripts(t, "serve", serveScript)
	p := scriptParams(dir, withURLs(map[string]string{docUpstreamVar: docUpstream(t), docOPAVar: docOPA(t)}))
	p.Cmds["cmpdoc"] = cmdCmpdoc
	p.Cmds["inorder"] = cmdInorder
	testscript.Run(t, p)
}

// sessionScripts writes a transcript of each block marked kind, as
// script makes it, with the docs' files, into a new directory it returns:
// one a block, named after its doc and line. No such block fails t.
func sessionScripts(t *testing.T, kind string, script func(docBlock) (string, error)) string {
	dir, files := t.TempDir(), docFilesOf(t)
	n := 0
	for _, b := range markedBlocks(t, kind) {
		s, err := script(b)
		if err != nil {
			t.Fatalf("%s:%d: %v", b.doc, b.line, err)
		}
		n++
		name := fmt.Sprintf("%s-%d.txtar", strings.TrimSuffix(filepath.Base(b.doc), ".md"), b.line)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s+files), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if n == 0 {
		t.Fatalf("no %s sessions found in the docs", kind)
	}
	return dir
}

var exitArg = regexp.MustCompile(`(?:^| )exit=([0-9]+)(?: |$)`)

// serveScript turns a serve block into a transcript.
func serveScript(b docBlock) (string, error) {
	var cmds, files, requests, responses, events strings.Builder
	args := strings.Fields(b.arg)
	var serveArgs []string
	status, lockstep := "0", false
	for _, a := range args {
		switch {
		case a == "lockstep":
			lockstep = true
		case strings.HasPrefix(a, "clock="):
			cmds.WriteString("env ARCATEST_NOW=" + strings.TrimPrefix(a, "clock=") + "\n")
		case strings.HasPrefix(a, "exit="):
			status = strings.TrimPrefix(a, "exit=")
		default:
			serveArgs = append(serveArgs, a)
		}
	}
	cmds.WriteString("exec arca init\n")
	if err := given(&cmds, &files, b.more); err != nil {
		return "", err
	}
	var session strings.Builder // requests ("> ") and commands ("$ "), when the host runs the block
	var outs []*strings.Builder // what each command prints
	if lockstep {
		session.WriteString("lockstep\n")
	}
	for _, l := range strings.Split(strings.TrimSuffix(b.body, "\n"), "\n") {
		if strings.HasPrefix(l, "$ ") {
			session.WriteString(l + "\n")
			outs = append(outs, &strings.Builder{})
			continue
		}
		var obj map[string]json.RawMessage
		// A line that is no object is a (bad) request; a "…" may stand
		// for a number ("elapsed_ms":…), so it is read as one here.
		_ = json.Unmarshal([]byte(strings.ReplaceAll(l, "…", "0")), &obj)
		switch {
		case len(outs) > 0 && obj["op"] == nil && obj["ok"] == nil && obj["event"] == nil:
			outs[len(outs)-1].WriteString(l + "\n")
		case obj["event"] != nil:
			events.WriteString(l + "\n")
		case obj["ok"] != nil:
			responses.WriteString(l + "\n")
		default:
			requests.WriteString(l + "\n")
			session.WriteString("> " + l + "\n")
		}
	}
	serve := strings.TrimSpace("arca serve " + strings.Join(serveArgs, " "))
	hosted := lockstep || hostWaits(requests.String())
	if hosted || len(outs) > 0 { // the session's requests are sent by the host, between its commands
		serve = "servehost session.txt " + serve
		fmt.Fprintf(&files, "-- session.txt --\n%s", session.String())
	} else {
		cmds.WriteString("stdin requests.jsonl\n")
		fmt.Fprintf(&files, "-- requests.jsonl --\n%s", requests.String())
	}
	if status == "0" {
		fmt.Fprintf(&cmds, "exec %s\n", serve)
	} else {
		fmt.Fprintf(&cmds, "exitcode %s %s\n", status, serve)
	}
	if responses.Len() > 0 {
		cmds.WriteString("cmpdoc stdout want.stdout\n")
		fmt.Fprintf(&files, "-- want.stdout --\n%s", responses.String())
	} else if requests.Len() == 0 {
		cmds.WriteString("! stdout .\n")
	}
	if events.Len() > 0 {
		cmds.WriteString("inorder stderr want.stderr\n")
		fmt.Fprintf(&files, "-- want.stderr --\n%s", events.String())
	}
	for i, o := range outs {
		fmt.Fprintf(&cmds, "cmpdoc cmd-%d.out want-cmd-%d.out\n", i+1, i+1)
		fmt.Fprintf(&files, "-- want-cmd-%d.out --\n%s", i+1, o.String())
	}
	return cmds.String() + files.String(), nil
}

// inorder stdout|stderr FILE: every line of FILE is a line of what the
// last command printed, in the same order.
func cmdInorder(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: inorder stdout|stderr FILE")
	}
	got := strings.Split(ts.ReadFile(args[0]), "\n")
	i := 0
	for _, want := range strings.Split(strings.TrimSuffix(ts.ReadFile(args[1]), "\n"), "\n") {
		for i < len(got) && !docMatch(got[i], want) {
			i++
		}
		if i == len(got) {
			ts.Fatalf("%s lacks, in the doc's order:\n%s\n--- printed\n%s", args[0], want, ts.ReadFile(args[0]))
		}
		i++
	}
}
