// Command arca is a secrets broker: single-shot verbs for people and scripts.
//
// Where every byte goes: stdout carries only the data a verb was asked for
// (a value, a listing, JSON). stderr carries one-line messages for people and
// never a value. Audit events go to the audit file, never to stderr.
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"maps"
	"os"
	"slices"
	"sort"
	"time"

	"golang.org/x/term"
)

// cli is the process's outside world, passed down so tests can replace it.
type cli struct {
	stdin     io.Reader
	stdout    io.Writer
	stderr    io.Writer
	getenv    func(string) string
	environ   func() []string
	now       func() time.Time
	stdinTTY  bool
	stdoutTTY bool
	global    common // --config and --env given before the verb
}

// verb runs one command; what it returns, exit maps to the exit status.
type verb struct {
	run     func(ctx context.Context, c *cli, args []string) error
	summary string
}

func verbs() map[string]verb {
	return map[string]verb{
		"init":       {runInit, "create the identity and the vault (existing ones are kept)"},
		"get":        {runGet, "print a secret's value"},
		"put":        {runPut, "store a secret read from stdin"},
		"rotate":     {runRotate, "replace an existing secret's value, read from stdin"},
		"rm":         {runRm, "delete a secret"},
		"list":       {runList, "list secrets and their metadata, never values"},
		"check":      {runCheck, "probe the vault, or a backup file: key, records, permissions"},
		"migrate":    {runMigrate, "bring secrets in from dotenv, JSON, YAML, vault kv or arenzana/arca files"},
		"deploy":     {runDeploy, "render templates with secrets into the files programs read"},
		"export":     {runExport, "print an env's secrets as JSON or dotenv, for another tool"},
		"run":        {runRun, "run a command with the allowlisted environment and the secrets it asks for"},
		"env":        {runEnv, "print the secrets run would hand a command, as sh, dotenv or JSON assignments"},
		"serve":      {runServe, "serve requests as NDJSON on stdin/stdout, audit events on stderr"},
		"schema":     {runSchema, "print the JSON Schemas of the serve protocol"},
		"vault":      {runVault, "recipients list|add|rm, rekey, backup FILE, restore FILE"},
		"version":    {runVersion, "print arca's version"},
		"status":     {runStatus, "show the config, env, audit file and each env's vault in effect, and whether each answers"},
		"identity":   {runIdentity, "print this identity's public key"},
		"completion": {runCompletion, "print a bash, zsh or fish script that completes arca's verbs, flags and envs"},
		"ui":         {runUI, "serve a read-only web page of the envs' records, health and audit trail"},
		"audit":      {runAudit, "show the audit trail (filters, --json, --follow); verify its chain; print its anchor"},
	}
}

func main() { os.Exit(start(os.Args[1:], time.Now)) }

// start protects the process before anything is read (protect.go), then
// runs the verb args name with the clock now and returns the exit status.
// A process that cannot be protected does nothing: exit 1.
func start(args []string, now func() time.Time) int {
	// The standard logger writes to stderr, which is serve's audit wire
	// and, for every verb, for messages arca wrote: a library's line there
	// (net/http reports an HTTP decider's unasked response through it,
	// quoting the server's bytes) would be neither. Nothing arca runs logs.
	log.SetOutput(io.Discard)
	perr := protectProcess()
	c := processCLI(now)
	if perr != nil {
		err := opErrorf("cannot protect the process (nothing is done): %v", perr)
		if len(args) > 0 && args[0] == "serve" {
			// serve's stderr is the audit wire, even for this.
			c.stopEvent("cannot start: " + err.Error())
			err = reported{err}
		}
		return c.exit(err)
	}
	c.stdinTTY = term.IsTerminal(int(os.Stdin.Fd()))
	c.stdoutTTY = term.IsTerminal(int(os.Stdout.Fd()))
	return c.main(context.Background(), args)
}

// processCLI is the process's own outside world, with the clock now.
func processCLI(now func() time.Time) *cli {
	return &cli{
		stdin:   os.Stdin,
		stdout:  os.Stdout,
		stderr:  os.Stderr,
		getenv:  os.Getenv,
		environ: os.Environ,
		now:     now,
	}
}

// main runs one verb and returns the exit status.
func (c *cli) main(ctx context.Context, args []string) int {
	return c.exit(c.dispatch(ctx, args))
}

// dispatch runs the verb args name, after the global flags.
func (c *cli) dispatch(ctx context.Context, args []string) error {
	args, asked, err := c.globalArgs(args)
	if err != nil {
		return err
	}
	switch {
	case asked == "version":
		return runVersion(ctx, c, args)
	case asked == "help":
		return runHelp(ctx, c, args)
	case len(args) == 0:
		c.usage(c.stderr)
		return reported{usagef("no command")}
	}
	if args[0] == "help" {
		return runHelp(ctx, c, args[1:])
	}
	vs := verbs()
	v, ok := vs[args[0]]
	if !ok {
		return usagef("unknown command %q%s (run arca help)", args[0], suggestion(args[0], slices.Sorted(maps.Keys(vs)), ""))
	}
	return v.run(ctx, c, args[1:])
}

// runHelp is `arca help [VERB...]`: the general usage, or the verb's own,
// as `arca VERB... -h` prints it; `arca help --man` is arca(1) in roff.
func runHelp(ctx context.Context, c *cli, args []string) error {
	if len(args) == 0 {
		c.usage(c.stdout)
		return nil
	}
	if len(args) == 1 && args[0] == "--man" {
		c.writeMan(c.stdout)
		return nil
	}
	if _, ok := verbs()[args[0]]; !ok {
		return c.dispatch(ctx, args) // the unknown-command error, with its suggestion
	}
	return c.dispatch(ctx, append(slices.Clone(args), "-h"))
}

func (c *cli) usage(w io.Writer) {
	fmt.Fprintln(w, "usage: arca [--config FILE] [--env ENV] <command> [flags] [args]")
	fmt.Fprintln(w, "\ncommands:")
	vs := verbs()
	names := make([]string, 0, len(vs))
	for n := range vs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, vs[n].summary)
	}
	fmt.Fprintln(w, "\nflags for every vault command, before or after it: --env ENV, --config FILE")
	fmt.Fprintln(w, "arca help COMMAND (or arca COMMAND -h) describes one; arca --version prints the version")
}
