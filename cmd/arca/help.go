package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// usage is the general usage, `arca help`: the synopsis and the verbs.
func (c *cli) usage(w io.Writer, root *command) {
	fmt.Fprintln(w, "usage: arca [--config FILE] [--env ENV] <command> [flags] [args]")
	fmt.Fprintln(w, "\ncommands:")
	printCommands(w, slices.SortedFunc(slices.Values(root.subs), func(a, b *command) int { return strings.Compare(a.name, b.name) }))
	fmt.Fprintln(w, "\nflags for every vault command, before or after it: --env ENV, --config FILE")
	fmt.Fprintln(w, "arca help COMMAND (or arca COMMAND -h) describes one; arca --version (or -v) prints the version")
}

// printCommands lists cmds, a name and its summary a line.
func printCommands(w io.Writer, cmds []*command) {
	width := 0
	for _, s := range cmds {
		width = max(width, len(s.name))
	}
	for _, s := range cmds {
		fmt.Fprintf(w, "  %-*s %s\n", width, s.name, s.summary)
	}
}

// runHelp is `arca help [COMMAND...]`: the general usage, or the
// command's own help, as `arca COMMAND... -h` prints it; `arca help --man`
// is arca(1) in roff.
func (c *cli) runHelp(ctx context.Context, root *command, args []string) error {
	switch {
	case len(args) == 0 || args[0] == "help":
		c.usage(c.stdout, root)
		return nil
	case len(args) == 1 && args[0] == "--man":
		c.writeMan(c.stdout)
		return nil
	case strings.HasPrefix(args[0], "-"):
		return c.dispatch(ctx, args) // the global flags' error, or help
	}
	cmd, path, rest, err := root.find(args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return unknownCommand(path, rest[0], cmd)
	}
	c.printHelp(c.stdout, c.flagSet(strings.Join(path, " "), cmd))
	return flag.ErrHelp
}

// printHelp writes the help of fs's command: its usage lines, what it
// does (paragraphs apart where its text has a blank line), its flags, its sub-commands, examples and exit statuses.
func (c *cli) printHelp(w io.Writer, fs *verbFlags) {
	cmd := fs.cmd
	for i, l := range c.usageLines(fs) {
		if i > 0 {
			l = "       " + strings.TrimPrefix(l, "usage: ")
		}
		fmt.Fprintln(w, l)
	}
	for _, para := range strings.Split(cmd.text, "\n\n") {
		fmt.Fprintf(w, "\n%s\n", wrap(para, 76))
	}
	if cmd.run != nil && len(flagNames(fs.FlagSet)) > 0 {
		fmt.Fprintln(w, "\nflags:")
		printFlags(w, fs.FlagSet)
	}
	if len(cmd.subs) > 0 {
		fmt.Fprintln(w, "\ncommands:")
		printCommands(w, cmd.subs)
	}
	if len(cmd.examples) > 0 {
		fmt.Fprintln(w, "\nexamples:")
		for _, e := range cmd.examples {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
	fmt.Fprintf(w, "\n%s\n", wrap("exit status: "+cmd.exits, 76))
}

// usageLines are the usage lines of fs's command: its own, or, when only
// its sub-commands run, each of theirs.
func (c *cli) usageLines(fs *verbFlags) []string {
	if fs.cmd.run != nil {
		return []string{fs.usage()}
	}
	var lines []string
	fs.cmd.walk(func(path string, sub *command) {
		if sub.run != nil {
			lines = append(lines, c.flagSet(fs.Name()+" "+path, sub).usage())
		}
	})
	return lines
}

// printFlags writes the flags of fs as the flag package does, but named
// as they are given: --name VALUE.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	var b bytes.Buffer
	fs.SetOutput(&b)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
	for _, l := range strings.SplitAfter(b.String(), "\n") {
		if rest, ok := strings.CutPrefix(l, "  -"); ok {
			l = "  --" + rest
		}
		io.WriteString(w, l)
	}
}

// flagNames are the flags of fs, as --name, sorted.
func flagNames(fs *flag.FlagSet) []string {
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, "--"+f.Name) })
	return names
}

// helpOf is what `arca help PATH` prints, the flags' defaults those of no
// global flags.
func helpOf(path string, cmd *command) string {
	var b strings.Builder
	c := &cli{}
	c.printHelp(&b, c.flagSet(path, cmd))
	return b.String()
}

// wrap breaks text into lines of at most width columns, at spaces.
func wrap(text string, width int) string {
	var b strings.Builder
	col := 0
	for i, word := range strings.Fields(text) {
		if i > 0 && col+1+len(word) > width {
			b.WriteByte('\n')
			col = 0
		} else if i > 0 {
			b.WriteByte(' ')
			col++
		}
		b.WriteString(word)
		col += len(word)
	}
	return b.String()
}
