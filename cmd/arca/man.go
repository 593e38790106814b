package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/arca-secrets/arca/manifest"
)

// writeMan writes arca(1) in roff: the general usage, then each command's
// help exactly as `arca help COMMAND` prints it, so the two cannot differ
// (docs/arca.1 is this output; a test holds it to the binary's).
func (c *cli) writeMan(w io.Writer) {
	fmt.Fprintf(w, ".TH ARCA 1 \"\" \"arca %s\" \"User Commands\"\n", manifest.Release)
	fmt.Fprintln(w, ".SH NAME\narca \\- a secrets broker: encrypted vaults for people, scripts and software agents")
	fmt.Fprintln(w, ".SH SYNOPSIS\n.B arca\n[\\-\\-config FILE] [\\-\\-env ENV] COMMAND [flags] [args]")
	fmt.Fprintln(w, ".SH DESCRIPTION")
	root := commands()
	var usage strings.Builder
	c.usage(&usage, root)
	writeRoffBlock(w, usage.String())
	fmt.Fprintln(w, ".SH COMMANDS")
	root.walk(func(path string, cmd *command) {
		fmt.Fprintf(w, ".SS %s\n", roffEscape("arca "+path))
		writeRoffBlock(w, helpOf(path, cmd))
	})
	fmt.Fprintln(w, ".SH FILES\n.TP\n~/.config/arca/identity.txt\nthe age identity\n.TP\n~/.local/share/arca/default.vault\nthe embedded file vault\n.TP\n~/.local/state/arca/audit.log\nthe CLI's audit trail")
	fmt.Fprintln(w, ".SH SEE ALSO\nThe docs directory of arca's sources: cli.md, protocol.md, config.md, audit.md.")
}

// writeRoffBlock writes text as it is, lines unfilled.
func writeRoffBlock(w io.Writer, text string) {
	fmt.Fprintln(w, ".nf")
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		fmt.Fprintln(w, roffEscape(l))
	}
	fmt.Fprintln(w, ".fi")
}

// roffEscape makes a line roff prints as it is: backslashes and dashes
// escaped, a leading dot or quote made plain.
func roffEscape(l string) string {
	l = strings.ReplaceAll(l, `\`, `\e`)
	l = strings.ReplaceAll(l, "-", `\-`)
	if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
		l = `\&` + l
	}
	return l
}
