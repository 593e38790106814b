package main

import (
	"context"
	"errors"
	"flag"
	"os/signal"
	"strings"
	"syscall"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/internal/termsafe"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/serve"
)

func serveCommand() *command {
	return &command{
		name: "serve", summary: "serve requests as NDJSON on stdin/stdout, audit events on stderr",
		text:     "Serve the vault operations as newline-delimited JSON: one request a line on stdin, one response a line on stdout, one audit event a line on stderr (docs/protocol.md). Before an op that could reveal or change a secret it asks the configured policy decision point.",
		examples: []string{"arca serve --config /etc/arca/agent.toml"},
		exits:    "0 at EOF or shutdown; 1 a stop signal, a failed pipe, or a config that cannot load; 2 usage or an unknown --env",
		run:      runServe,
	}
}

// runServe runs the request loop. From here on stderr is the audit wire:
// even a usage error or a failure to start is an event line, never text.
func runServe(ctx context.Context, c *cli, fs *verbFlags, args []string) error {
	if _, err := c.parse(fs, args, 0); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			c.stopEvent(strings.TrimSpace(termsafe.Escape(err.Error())))
			return reported{err}
		}
		return err
	}
	co := fs.co
	cfg, err := ops.LoadConfig(co.config, c.getenv)
	if err != nil {
		c.stopEvent("cannot start: " + err.Error())
		return reported{err}
	}
	if err := c.unlock(cfg); err != nil {
		c.stopEvent("cannot start: " + err.Error())
		return reported{err}
	}
	// A reader that goes away must not kill serve with SIGPIPE: writes then
	// fail with EPIPE, which serve answers (op_error, exit 1).
	signal.Ignore(syscall.SIGPIPE)
	err = serve.Serve(ctx, serve.Options{
		Stdin: c.stdin, Stdout: c.raw.stdout, Stderr: c.raw.stderr,
		Config: cfg, Backends: c.kinds(), Keys: c.identityKeys(), Env: c.contextEnv(co), Now: c.now, Environ: c.environ(), Who: c.who,
	})
	if err != nil {
		// Its stop event said why; stderr is the audit wire, so nothing
		// else is printed. The status is op_error's.
		return reported{err}
	}
	return nil
}

// stopEvent writes the one event of a serve that never started.
func (c *cli) stopEvent(msg string) {
	w := audit.NewWriter(c.raw.stderr, audit.SourceServe, c.now)
	_ = w.Write(c.cannotStart(msg))
}

// cannotStart is the stop event of a session (serve's, mcp's) that never
// started: why, and who tried where, as its start event would have said.
func (c *cli) cannotStart(msg string) audit.Event {
	who := audit.CleanWho(c.who)
	return audit.Event{Event: "stop", Message: msg, User: who.User, Host: who.Host}
}

func schemaCommand() *command {
	return &command{
		name: "schema", args: "[NAME]", summary: "print the JSON Schemas of the serve protocol", bare: true,
		text: "Print the JSON Schemas of the serve protocol: all of them keyed by name, or the one named. Each stands alone, with the $id urn:arca-serve:1:NAME.\n\nNAME is one of: " +
			strings.Join(manifest.SchemaNames(), ", ") + ".",
		examples: []string{"arca schema result.get", "arca schema | jq keys"},
		exits:    plainExits,
		run:      runSchema,
	}
}

// runSchema prints the published JSON Schemas: all of them as one object
// keyed by name, or the one named.
func runSchema(_ context.Context, c *cli, fs *verbFlags, args []string) error {
	args, err := c.parse(fs, args, anyArgs)
	if err != nil {
		return err
	}
	switch len(args) {
	case 0:
		all, err := manifest.Schemas()
		if err != nil {
			return opErrorf("schemas: %v", err)
		}
		return c.printJSON(all)
	case 1:
		b, err := manifest.Schema(args[0])
		if err != nil {
			return usagef("%v", err)
		}
		if _, err := c.stdout.Write(b); err != nil {
			return opErrorf("write schema: %v", err)
		}
		return nil
	}
	return usagef("usage: arca schema [NAME]")
}
