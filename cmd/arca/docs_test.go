package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// The examples in the docs are run, so a doc cannot drift from the code.
// A doc marks them with HTML comments before fenced blocks:
//
//	<!-- file: NAME -->      the next block is a file the examples use
//	<!-- example -->         the next block is a console session
//	<!-- example clock=T --> the same, run with arca's clock stopped at T
//	                         (RFC 3339), for output that shows times
//
// Each session runs in a fresh HOME after arca init, with every file of
// its doc in the working directory. A line "$ arca ARGS [< FILE]" is a
// command ("< FILE" is its stdin; a trailing "# exit N" is its exit
// status, else 0), and the lines up to the next command are what it
// prints: lines starting "arca: " on stderr, the others on stdout, exactly
// (output that ends without a newline, as a value from arca get, shows as
// a line). Each session becomes one transcript, run like those in
// testdata/script.
func TestDocExamples(t *testing.T) {
	docs, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs found: %v", err)
	}
	dir := t.TempDir()
	examples := 0
	for _, doc := range docs {
		scripts, err := docScripts(doc)
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
	if want := ts.ReadFile(args[1]); got != want {
		ts.Fatalf("%s differs from the doc:\n--- printed\n%s--- the doc shows\n%s", args[0], got, want)
	}
}

var (
	fileMark  = regexp.MustCompile(`^<!-- file: ([A-Za-z0-9._-]+) -->$`)
	clockMark = regexp.MustCompile(`^<!-- example clock=([0-9T:.Z-]+) -->$`)
	exitMark  = regexp.MustCompile(`\s+# exit ([0-9]+)$`)
)

// docScripts turns each example of doc into a transcript, with every file
// the doc marks.
func docScripts(doc string) ([]string, error) {
	data, err := os.ReadFile(doc)
	if err != nil {
		return nil, err
	}
	var files strings.Builder
	var sessions []string
	mark, clock := "", ""
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		switch {
		case text == "<!-- example -->":
			mark, clock = "example", ""
		case clockMark.MatchString(text):
			mark, clock = "example", clockMark.FindStringSubmatch(text)[1]
		case fileMark.MatchString(text):
			mark = "file " + fileMark.FindStringSubmatch(text)[1]
		case mark != "" && strings.HasPrefix(text, "```"):
			block, read := fencedBlock(sc)
			if mark == "example" {
				var cmds, wants strings.Builder
				if clock != "" {
					cmds.WriteString("env ARCATEST_NOW=" + clock + "\n")
				}
				cmds.WriteString("exec arca init\n")
				if err := session(&cmds, &wants, block); err != nil {
					return nil, fmt.Errorf("line %d: %v", line, err)
				}
				sessions = append(sessions, cmds.String()+wants.String())
			} else {
				fmt.Fprintf(&files, "-- %s --\n%s", strings.TrimPrefix(mark, "file "), block)
			}
			line += read
			mark = ""
		}
	}
	for i := range sessions {
		sessions[i] += files.String()
	}
	return sessions, sc.Err()
}

// fencedBlock reads the lines of a fenced block up to its closing fence.
func fencedBlock(sc *bufio.Scanner) (string, int) {
	var b strings.Builder
	n := 0
	for sc.Scan() {
		n++
		if strings.HasPrefix(sc.Text(), "```") {
			break
		}
		b.WriteString(sc.Text() + "\n")
	}
	return b.String(), n
}

// session writes the commands of a console block to cmds and what each
// must print to files.
func session(cmds, files *strings.Builder, block string) error {
	type run struct {
		args, stdin, status string
		stdout, stderr      strings.Builder
	}
	var runs []*run
	for _, l := range strings.SplitAfter(strings.TrimSuffix(block, "\n"), "\n") {
		text := strings.TrimSuffix(l, "\n")
		switch {
		case strings.HasPrefix(text, "$ arca "):
			r := &run{args: strings.TrimPrefix(text, "$ "), status: "0"}
			if m := exitMark.FindStringSubmatch(r.args); m != nil {
				r.status, r.args = m[1], strings.TrimSuffix(r.args, m[0])
			}
			if i := strings.LastIndex(r.args, " < "); i >= 0 {
				r.args, r.stdin = r.args[:i], strings.TrimSpace(r.args[i+3:])
			}
			runs = append(runs, r)
		case strings.HasPrefix(text, "$ "):
			return fmt.Errorf("only arca commands can be run: %q", text)
		case len(runs) == 0:
			return fmt.Errorf("output before the first command: %q", text)
		case strings.HasPrefix(text, "arca: "):
			runs[len(runs)-1].stderr.WriteString(text + "\n")
		default:
			runs[len(runs)-1].stdout.WriteString(text + "\n")
		}
	}
	for i, r := range runs {
		id := i + 1
		if r.stdin != "" {
			fmt.Fprintf(cmds, "stdin %s\n", r.stdin)
		}
		if r.status == "0" {
			fmt.Fprintf(cmds, "exec %s\n", r.args)
		} else {
			fmt.Fprintf(cmds, "exitcode %s %s\n", r.status, r.args)
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
	return nil
}
