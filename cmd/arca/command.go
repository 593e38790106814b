package main

import (
	"context"
	"flag"
	"io"
	"slices"
	"strings"
)

// command is one of arca's verbs or sub-verbs, whole: what its help says,
// the flags it takes and what it runs. Usage, help, the man page,
// completion and dispatch are all read off the tree commands builds.
type command struct {
	name     string   // the word that names it after its parent's: "get", "recipients"
	args     string   // its positional arguments, as its usage line ends: "REF", "[FILE...]"
	summary  string   // one line, in its parent's list of commands
	text     string   // what it does: a paragraph, or a few with a blank line between
	examples []string // command lines, each with a comment after " # "
	exits    string   // the exit statuses it gives
	bare     bool     // it takes neither --env nor --config
	// flags registers its own flags on a FlagSet (the common ones are
	// there already unless bare); nil when it has none.
	flags func(fs *flag.FlagSet)
	// run runs it with its FlagSet, not yet parsed, and the arguments after
	// its name; nil when only its sub-commands run.
	run  func(ctx context.Context, c *cli, fs *verbFlags, args []string) error
	subs []*command
}

const (
	vaultExits = "0 ok; 1 operation error (config, vault, audit file); 2 usage or bad request; 3 denied by a guardrail; 4 not found"
	plainExits = "0 ok; 1 operation error; 2 usage"
)

// commands is arca's tree of commands: its root is arca itself, whose
// sub-commands are the verbs. Each call builds it anew: a command's flags
// are bound to variables its run reads.
func commands() *command {
	return &command{name: "arca", subs: []*command{
		auditCommand(), changesCommand(), checkCommand(), completionCommand(), deployCommand(), destroyCommand(), envCommand(),
		exportCommand(), getCommand(), historyCommand(), identityCommand(), initCommand(), listCommand(),
		mcpCommand(), migrateCommand(), putCommand(), rmCommand(), rollbackCommand(), rotateCommand(), runCommand(),
		schemaCommand(), serveCommand(), statusCommand(), uiCommand(), undeleteCommand(), vaultCommand(),
		versionCommand(),
	}}
}

// sub is cmd's sub-command named name, or nil.
func (cmd *command) sub(name string) *command {
	for _, s := range cmd.subs {
		if s.name == name {
			return s
		}
	}
	return nil
}

// subNames are the names of cmd's sub-commands, in its order.
func (cmd *command) subNames() []string {
	names := make([]string, len(cmd.subs))
	for i, s := range cmd.subs {
		names[i] = s.name
	}
	return names
}

// walk calls fn with every command under cmd, depth first in the tree's
// order, and its path: its names after the root's ("vault rekey").
func (cmd *command) walk(fn func(path string, c *command)) {
	var visit func(prefix string, c *command)
	visit = func(prefix string, c *command) {
		for _, s := range c.subs {
			path := strings.TrimSpace(prefix + " " + s.name)
			fn(path, s)
			visit(path, s)
		}
	}
	visit("", cmd)
}

// find follows the words of args down the tree from cmd, as far as they
// name sub-commands. It returns the command reached, its path and the
// arguments left; a word that names none, where only sub-commands run, is
// the unknown-command error.
func (cmd *command) find(args []string) (found *command, path []string, rest []string, err error) {
	found, rest = cmd, args
	for len(rest) > 0 && len(found.subs) > 0 {
		s := found.sub(rest[0])
		if s == nil {
			if found.run != nil || len(path) > 0 && strings.HasPrefix(rest[0], "-") {
				break // an argument, or a flag (-h) of a command
			}
			return nil, nil, nil, unknownCommand(path, rest[0], found)
		}
		found, path, rest = s, append(path, s.name), rest[1:]
	}
	return found, path, rest, nil
}

// unknownCommand is the usage error for word under path, naming the
// nearest of parent's sub-commands when one is near.
func unknownCommand(path []string, word string, parent *command) error {
	prefix, help := strings.Join(path, " "), "arca help"
	if prefix != "" {
		prefix += " "
		help += " " + strings.Join(path, " ")
	}
	return usagef("unknown command %q%s (run %s)", prefix+word, suggestion(word, slices.Sorted(slices.Values(parent.subNames())), prefix), help)
}

// flagSet is cmd's FlagSet, named by its path: the common flags (unless it
// is bare) bound to the result's co, then its own. The flag package prints
// nothing itself: parse reports in one line.
func (c *cli) flagSet(path string, cmd *command) *verbFlags {
	fs := flag.NewFlagSet(path, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	vf := &verbFlags{FlagSet: fs, cmd: cmd}
	if !cmd.bare {
		fs.StringVar(&vf.co.env, "env", c.global.env, "the `ENV` to use (default: $ARCA_ENV, else the config's default_env)")
		fs.StringVar(&vf.co.config, "config", c.global.config, "the config `FILE` (default: $ARCA_CONFIG, ./arca.toml, ~/.config/arca/arca.toml)")
	}
	if cmd.flags != nil {
		cmd.flags(fs)
	}
	return vf
}

// jsonFlag registers --json, saying what it prints, and points *to at it.
func jsonFlag(to **bool, usage string) func(*flag.FlagSet) {
	return func(fs *flag.FlagSet) { *to = fs.Bool("json", false, usage) }
}
