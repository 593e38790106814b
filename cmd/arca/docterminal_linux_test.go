package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// typeArg is what a person types at each prompt of a terminal session.
var typeArg = regexp.MustCompile(`(?:^| )type=(\S+)`)

// TestDocTerminal runs the sessions of the docs that happen at a terminal
// (<!-- terminal [type=VALUE] -->): each "$ arca ARGS" runs with a
// pseudo-terminal as its stdin, stdout and stderr, in a fresh HOME after
// arca init; at a "value for" prompt VALUE and a newline are typed (and
// not echoed); what the terminal showed must be the lines up to the next
// command, exactly.
func TestDocTerminal(t *testing.T) {
	n := 0
	for _, b := range markedBlocks(t, "terminal") {
		n++
		t.Run(fmt.Sprintf("%s:%d", b.doc, b.line), func(t *testing.T) { runTerminal(t, b) })
	}
	if n == 0 {
		t.Fatal("no terminal sessions found in the docs")
	}
}

func runTerminal(t *testing.T, b docBlock) {
	typed := ""
	if m := typeArg.FindStringSubmatch(b.arg); m != nil {
		typed = m[1]
	}
	h := newArcaHome(t)
	var args []string
	var want strings.Builder
	run := func() {
		if args == nil {
			return
		}
		s := startTTY(t, h, true, args...)
		if typed != "" && (args[0] == "put" || args[0] == "rotate") {
			s.waitFor(t, "value for ")
			s.send(t, typed+"\n")
		}
		st, screen := s.wait(t)
		if got := strings.ReplaceAll(screen, "\r\n", "\n"); st != 0 || got != want.String() {
			t.Errorf("arca %s: exit %d, the terminal showed:\n%s--- the doc shows\n%s", strings.Join(args, " "), st, got, want.String())
		}
		want.Reset()
	}
	for _, l := range strings.Split(strings.TrimSuffix(b.body, "\n"), "\n") {
		if cmd, ok := strings.CutPrefix(l, "$ arca "); ok {
			run()
			args = strings.Fields(cmd)
			continue
		}
		if args == nil {
			t.Fatalf("output before the first command: %q", l)
		}
		want.WriteString(l + "\n")
	}
	run()
}
