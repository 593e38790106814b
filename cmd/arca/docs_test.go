package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// The console sessions of the docs are run, so a doc cannot drift from the
// code. A block marked <!-- example [clock=T] [noinit] --> is a session;
// clock=T runs it with arca's clock stopped at T (RFC 3339), for output
// that shows times. Each session runs in a fresh HOME, after arca init
// unless it says noinit, with every file the docs mark (<!-- file: NAME -->)
// in the working directory. A mark that goes on to more lines before its
// "-->" holds commands run first, whose output is not shown: what the
// session starts from.
//
// A line "$ arca ARGS [< FILE]" is an arca command ("< FILE" is its stdin);
// the lines up to the next command are what it prints: lines starting
// "arca: " on stderr, the others on stdout, exactly (output that ends
// without a newline, as a value from arca get, shows as a line). Any other
// "$ " line, or an arca command with pipes or redirections, is a bash
// command, and what follows it is its stdout and stderr together. A
// command line ending in "|", "\" or "&&" goes on to the next line. A
// trailing "# exit N" is the command's exit status, else 0. A "…" in an
// output line stands for any run of that line's characters (a temporary
// directory, a generated key, the link of an event after one that names
// a temporary directory). Each session
// becomes one transcript, run like those in testdata/script.
func TestDocExamples(t *testing.T) {
	dir, files := t.TempDir(), docFilesOf(t)
	examples := 0
	for _, doc := range docFiles(t) {
		scripts, err := docScripts(doc, files)
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		for i, script := range scripts {
			examples++
			name := fmt.Sprintf("%s-%d.txtar", strings.TrimSuffix(filepath.Base(doc), ".md"), i+1)
			if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	if examples == 0 {
		t.Fatal("no examples found in the docs")
	}
	p := scriptParams(dir, nil)
	p.Cmds["cmpdoc"] = cmdCmpdoc
	testscript.Run(t, p)
}

// cmpdoc stdout|stderr FILE compares what the last command printed with
// FILE, as a doc shows it: a last line without its newline is a line.
func cmdCmpdoc(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: cmpdoc stdout|stderr FILE")
	}
	got := ts.ReadFile(args[0])
	if got != "" && !strings.HasSuffix(got, "\n") {
		got += "\n"
	}
	if want := ts.ReadFile(args[1]); !docMatch(got, want) {
		ts.Fatalf("%s differs from the doc:\n--- printed\n%s--- the doc shows\n%s", args[0], got, want)
	}
}

// docMatch reports whether got is what a doc shows as want: the same
// text, where a "…" the doc shows in a line stands for any run of
// characters of that line (a temporary directory, say).
func docMatch(got, want string) bool {
	if !strings.Contains(want, "…") {
		return got == want
	}
	parts := strings.Split(want, "…")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile(`^` + strings.Join(parts, `[^\n]*`) + `$`).MatchString(got)
}

var (
	clockArg = regexp.MustCompile(`(?:^| )clock=([0-9T:.Z-]+)(?: |$)`)
	exitMark = regexp.MustCompile(`\s+# exit ([0-9]+)$`)
)

// docFilesOf returns the files the docs mark, as txtar sections: every
// session has every doc's files, so a file is marked once, and never as
// an ./arca.toml, which would be every session's config.
func docFilesOf(t *testing.T) string {
	t.Helper()
	var files strings.Builder
	seen := map[string]string{}
	for _, b := range markedBlocks(t, "file") {
		where := fmt.Sprintf("%s:%d", b.doc, b.line)
		switch {
		case b.arg == "arca.toml":
			t.Fatalf("%s: a doc's file may not be ./arca.toml: every session would load it", where)
		case seen[b.arg] != "":
			t.Fatalf("%s: file %s is marked already at %s", where, b.arg, seen[b.arg])
		}
		seen[b.arg] = where
		fmt.Fprintf(&files, "-- %s --\n%s", b.arg, b.body)
	}
	return files.String()
}

// docScripts turns each example of doc into a transcript, with files.
func docScripts(doc, files string) ([]string, error) {
	blocks, err := readBlocks(doc)
	if err != nil {
		return nil, err
	}
	var sessions []string
	for _, b := range blocks {
		if b.kind != "example" {
			continue
		}
		var cmds, wants strings.Builder
		if m := clockArg.FindStringSubmatch(b.arg); m != nil {
			cmds.WriteString("env ARCATEST_NOW=" + m[1] + "\n")
		}
		if !strings.Contains(" "+b.arg+" ", " noinit ") {
			cmds.WriteString("exec arca init\n")
		}
		if err := given(&cmds, &wants, b.more); err != nil {
			return nil, fmt.Errorf("line %d: %v", b.line, err)
		}
		if err := session(&cmds, &wants, b.body); err != nil {
			return nil, fmt.Errorf("line %d: %v", b.line, err)
		}
		sessions = append(sessions, cmds.String()+wants.String()+files)
	}
	return sessions, nil
}

// given writes the commands a mark holds, run before its block's session
// and with their output unchecked: what the session starts from.
func given(cmds, files *strings.Builder, more string) error {
	if more == "" {
		return nil
	}
	runs, err := parseSession(more)
	if err != nil {
		return fmt.Errorf("the mark's commands: %v", err)
	}
	for i, r := range runs {
		if r.stdout.Len()+r.stderr.Len() > 0 {
			return fmt.Errorf("the mark's commands show output: put them in the block")
		}
		if r.stdin != "" {
			fmt.Fprintf(cmds, "stdin %s\n", r.stdin)
		}
		fmt.Fprintf(cmds, "exec bash given-%d.sh\n", i+1)
		fmt.Fprintf(files, "-- given-%d.sh --\n%s\n", i+1, r.args)
	}
	return nil
}

// docRun is one command of a session and what it prints.
type docRun struct {
	args, stdin, status string
	shell               bool
	stdout, stderr      strings.Builder
}

// session writes the commands of a console block to cmds and what each
// must print to files.
func session(cmds, files *strings.Builder, block string) error {
	runs, err := parseSession(block)
	if err != nil {
		return err
	}
	for i, r := range runs {
		id := i + 1
		switch {
		case r.stdin != "":
			fmt.Fprintf(cmds, "stdin %s\n", r.stdin)
		case r.shell:
			fmt.Fprintf(cmds, "stdin empty-stdin\n")
		}
		command := r.args
		if r.shell {
			command = fmt.Sprintf("bash cmd-%d.sh", id)
			fmt.Fprintf(files, "-- cmd-%d.sh --\n{ %s\n} 2>&1\n", id, r.args)
		}
		if r.status == "0" {
			fmt.Fprintf(cmds, "exec %s\n", command)
		} else {
			fmt.Fprintf(cmds, "exitcode %s %s\n", r.status, command)
		}
		for _, out := range []struct {
			stream string
			want   string
		}{{"stdout", r.stdout.String()}, {"stderr", r.stderr.String()}} {
			if out.want == "" {
				fmt.Fprintf(cmds, "! %s .\n", out.stream)
				continue
			}
			fmt.Fprintf(cmds, "cmpdoc %s want-%d.%s\n", out.stream, id, out.stream)
			fmt.Fprintf(files, "-- want-%d.%s --\n%s", id, out.stream, out.want)
		}
	}
	files.WriteString("-- empty-stdin --\n")
	return nil
}

// parseSession reads the commands of a console block and their output.
func parseSession(block string) ([]*docRun, error) {
	var runs []*docRun
	lines := strings.Split(strings.TrimSuffix(block, "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		text := lines[i]
		switch {
		case strings.HasPrefix(text, "$ "):
			command := strings.TrimPrefix(text, "$ ")
			for continues(command) && i+1 < len(lines) {
				i++
				command += "\n" + lines[i]
			}
			runs = append(runs, newRun(command))
		case shellLine.MatchString(text):
			return nil, fmt.Errorf("a prompt other than \"$ \": %q", text)
		case len(runs) == 0:
			return nil, fmt.Errorf("output before the first command: %q", text)
		case strings.HasPrefix(text, "arca: ") && !runs[len(runs)-1].shell:
			runs[len(runs)-1].stderr.WriteString(text + "\n")
		default:
			runs[len(runs)-1].stdout.WriteString(text + "\n")
		}
	}
	return runs, nil
}

// continues reports whether a command line goes on to the next line.
func continues(command string) bool {
	for _, end := range []string{"|", "\\", "&&"} {
		if strings.HasSuffix(command, end) {
			return true
		}
	}
	return false
}

// newRun parses one command line.
func newRun(command string) *docRun {
	r := &docRun{args: command, status: "0"}
	if m := exitMark.FindStringSubmatch(r.args); m != nil {
		r.status, r.args = m[1], strings.TrimSuffix(r.args, m[0])
	}
	plain := strings.HasPrefix(r.args, "arca ") && !strings.ContainsAny(r.args, "|;&$>`()\n*")
	if plain {
		if i := strings.LastIndex(r.args, " < "); i >= 0 {
			r.args, r.stdin = r.args[:i], strings.TrimSpace(r.args[i+3:])
		}
		plain = !strings.Contains(r.args, "<")
	}
	r.shell = !plain
	return r
}
