package main

import (
	"bytes"
	"context"
	"maps"
	"slices"
	"strings"
)

// helpNames lists every verb and sub-verb help knows, as `arca help NAME`
// takes it: the verbs, then the sub-verbs of vault and audit.
func helpNames() []string {
	names := slices.Sorted(maps.Keys(verbs()))
	return append(names, "vault recipients list", "vault recipients add", "vault recipients rm", "vault rekey",
		"vault backup", "vault restore", "audit verify", "audit anchor", "identity rotate")
}

// helpOf is what `arca help NAME` prints: run, as it is, into a buffer.
func (c *cli) helpOf(name string) string {
	var out bytes.Buffer
	sub := &cli{stdin: strings.NewReader(""), stdout: &out, stderr: &bytes.Buffer{}, getenv: func(string) string { return "" },
		environ: func() []string { return nil }, now: c.now}
	sub.dispatch(context.Background(), append([]string{"help"}, strings.Fields(name)...))
	return out.String()
}

// flagsOf are the flags NAME's help lists, as --name.
func (c *cli) flagsOf(name string) []string {
	var flags []string
	for _, l := range strings.Split(c.helpOf(name), "\n") {
		if f, ok := strings.CutPrefix(l, "  -"); ok && f != "" && f[0] != '-' && f[0] != ' ' {
			flags = append(flags, "--"+strings.Fields(f)[0])
		}
	}
	return flags
}
