package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every fenced block of README.md and docs/*.md says what it is with an
// HTML comment on the line before its fence, and the test suite holds each
// kind to the code:
//
//	<!-- example [clock=T] -->  a console session, run (TestDocExamples)
//	<!-- serve [clock=T] [lockstep] [ARGS] -->
//	                            JSON lines of an arca serve session, and
//	                            commands run beside it, run (TestDocServe)
//	<!-- mcp [clock=T] [ARGS] -->
//	                            JSON-RPC lines of an arca mcp session,
//	                            run (TestDocMCP)
//	<!-- mcp-client -->         an MCP client's configuration, whose
//	                            servers are started (TestDocMCPClients)
//	<!-- file: NAME -->         a file the doc's examples use; a NAME.sh
//	                            is parsed by sh (TestDocShellFiles)
//	<!-- source: PATH -->       a file of the repository, whole
//	                            (TestDocSources)
//	<!-- teams-setup -->        docs/teams.md's cluster setup (TestTeamsSetup)
//	<!-- teams-session -->      its teammates' sessions, run on that cluster
//	<!-- terminal [type=V] -->  a session at a terminal, run through a
//	                            pseudo-terminal (TestDocTerminal, Linux)
//	<!-- bench -->              benchmark commands, whose every name is
//	                            checked (TestDocBenchCommands)
//	<!-- usage -->              synopsis lines, each a verb's usage as its
//	                            help prints it (TestDocUsage)
//	<!-- quickstart -->         the README's two commands (TestQuickStart)
//	<!-- install -->            the README's ways to install, checked and
//	                            run on a release build (TestReleaseScript)
//	<!-- json-schema: OUTPUT --> the schema of a JSON output, the code's
//	                            (TestJSONSchemasDocumented)
//	<!-- shown: WHAT -->        text that is neither a command nor what a
//	                            command prints (a grammar, a policy, a
//	                            table's layout), kept only where no
//	                            command is shown
//
// TestDocBlocksMarked refuses a block with no mark, and a "shown" block
// that holds a shell command.

// docBlock is one fenced block of a doc.
type docBlock struct {
	doc  string // the doc's path
	line int    // the line of its opening fence
	lang string // the info string after the fence
	body string // its lines, each ending in "\n"
	kind string // the mark's kind: "example", "file", "serve", …; "" if none
	arg  string // what follows the kind in the mark
	more string // the lines of a mark that spans lines, after its first
}

// markLine is a mark's first line, without its " -->" if it has one: its
// kind and what follows.
var markLine = regexp.MustCompile(`^<!-- ([a-z-]+)(?::? (.*))?$`)

// docFiles are the docs whose blocks are held to the code.
func docFiles(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs found: %v", err)
	}
	return append([]string{"../../README.md"}, docs...)
}

// markedBlocks returns the blocks of every doc marked kind, in order.
func markedBlocks(t *testing.T, kind string) []docBlock {
	t.Helper()
	var marked []docBlock
	for _, doc := range docFiles(t) {
		blocks, err := readBlocks(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range blocks {
			if b.kind == kind {
				marked = append(marked, b)
			}
		}
	}
	return marked
}

// readBlocks returns the fenced blocks of doc with their marks.
func readBlocks(doc string) ([]docBlock, error) {
	data, err := os.ReadFile(doc)
	if err != nil {
		return nil, err
	}
	var blocks []docBlock
	var mark *docBlock // the mark read last, if only blank lines followed it
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimLeft(sc.Text(), " ") // a block or mark in a list item is indented
		switch {
		case strings.HasPrefix(text, "```"):
			b := docBlock{doc: doc, line: line, lang: strings.TrimSpace(strings.TrimLeft(text, "`"))}
			if mark != nil {
				b.kind, b.arg, b.more = mark.kind, mark.arg, mark.more
			}
			body, read := fencedBlock(sc)
			b.body = body
			line += read
			blocks = append(blocks, b)
			mark = nil
		case strings.HasPrefix(text, "<!-- "):
			first, ends := strings.CutSuffix(text, " -->")
			m := markLine.FindStringSubmatch(first)
			if m == nil {
				return nil, fmt.Errorf("%s:%d: a comment that is not a mark: %q", doc, line, text)
			}
			mark = &docBlock{kind: m[1], arg: m[2]}
			if !ends { // the mark goes on to a line "-->"
				more, read, err := markRest(sc)
				if err != nil {
					return nil, fmt.Errorf("%s:%d: %v", doc, line, err)
				}
				mark.more, line = more, line+read
			}
		case strings.TrimSpace(text) == "":
		default:
			mark = nil
		}
	}
	return blocks, sc.Err()
}

// markRest reads the lines of a mark up to its "-->".
func markRest(sc *bufio.Scanner) (string, int, error) {
	var b strings.Builder
	n := 0
	for sc.Scan() {
		n++
		if sc.Text() == "-->" {
			return b.String(), n, nil
		}
		b.WriteString(sc.Text() + "\n")
	}
	return "", n, fmt.Errorf("a mark that never ends with a line -->")
}

// markKinds are the kinds of mark a block may have.
func markKinds() map[string]bool {
	return map[string]bool{"example": true, "serve": true, "file": true, "source": true,
		"teams-setup": true, "usage": true, "quickstart": true, "shown": true, "terminal": true, "bench": true, "teams-session": true,
		"mcp": true, "mcp-client": true, "install": true, "json-schema": true}
}

// shellLine matches a line that is a command at a prompt.
var shellLine = regexp.MustCompile(`^[a-z]*\$ `)

func TestDocBlocksMarked(t *testing.T) {
	kinds, count := markKinds(), map[string]int{}
	for _, doc := range docFiles(t) {
		blocks, err := readBlocks(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range blocks {
			count[b.kind]++
			where := fmt.Sprintf("%s:%d", b.doc, b.line)
			switch {
			case b.kind == "":
				t.Errorf("%s: a block with no mark (say what it is: see docblocks_test.go)", where)
			case !kinds[b.kind]:
				t.Errorf("%s: unknown mark %q", where, b.kind)
			case b.kind == "shown" && b.arg == "":
				t.Errorf("%s: a shown block must say what it shows", where)
			case b.kind == "shown" && hasShellLine(b.body):
				t.Errorf("%s: a shown block holds a command: make it an example", where)
			case b.kind == "shown" && (b.lang == "sh" || b.lang == "bash" || b.lang == "console"):
				t.Errorf("%s: a shown block of %s: make it an example or a file", where, b.lang)
			}
		}
	}
	for _, k := range []string{"example", "serve", "file", "usage", "quickstart"} {
		if count[k] == 0 {
			t.Errorf("no block is marked %q: is the parser reading the marks?", k)
		}
	}
}

// hasShellLine reports whether body holds a command at a prompt.
func hasShellLine(body string) bool {
	for _, l := range strings.Split(body, "\n") {
		if shellLine.MatchString(l) {
			return true
		}
	}
	return false
}

// fencedBlock reads the lines of a fenced block up to its closing fence.
func fencedBlock(sc *bufio.Scanner) (string, int) {
	var b strings.Builder
	n := 0
	for sc.Scan() {
		n++
		if strings.HasPrefix(strings.TrimLeft(sc.Text(), " "), "```") {
			break
		}
		b.WriteString(sc.Text() + "\n")
	}
	return b.String(), n
}
