package main

import (
	"bytes"
	"os/signal"
	"strings"
	"syscall"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/backend"
	"github.com/arca-secrets/arca/serve"
)

// runServe runs the request loop. From here on stderr is the audit wire:
// even a usage error or a failure to start is an event line, never text.
func runServe(c *cli, args []string) int {
	var co common
	var msg bytes.Buffer
	quiet := *c
	quiet.stderr = &msg
	if _, st := quiet.parse(quiet.flags("serve", "", &co), args, 0); st >= 0 {
		if st != manifest.ExitOK {
			c.stopEvent(strings.TrimPrefix(strings.TrimSpace(msg.String()), "arca: "))
		}
		return st
	}
	cfg, err := ops.LoadConfig(co.config, c.getenv)
	if err != nil {
		c.stopEvent("cannot start: " + err.Error())
		return manifest.ExitStatus(ops.CodeOf(err))
	}
	// A reader that goes away must not kill serve with SIGPIPE: writes then
	// fail with EPIPE, which serve answers (op_error, exit 1).
	signal.Ignore(syscall.SIGPIPE)
	return serve.Run(c.ctx, serve.Options{
		Stdin: c.stdin, Stdout: c.stdout, Stderr: c.stderr,
		Config: cfg, Backends: backend.Kinds{}, Env: c.contextEnv(co), Now: c.now, Environ: c.environ(),
	})
}

// stopEvent writes the one event of a serve that never started.
func (c *cli) stopEvent(msg string) {
	w := audit.NewWriter(c.stderr, audit.SourceServe, c.now)
	_ = w.Write(audit.Event{Event: "stop", Message: msg})
}

// runSchema prints the published JSON Schemas: all of them as one object
// keyed by name, or the one named.
func runSchema(c *cli, args []string) int {
	switch len(args) {
	case 0:
		all, err := manifest.Schemas()
		if err != nil {
			return c.failf(manifest.ExitOpError, "schemas: %v", err)
		}
		return c.printJSON(all)
	case 1:
		b, err := manifest.Schema(args[0] + ".json")
		if err != nil {
			return c.failf(manifest.ExitUsage, "no schema %q (one of: request, response, error, result, event)", args[0])
		}
		_, err = c.stdout.Write(b)
		if err != nil {
			return c.failf(manifest.ExitOpError, "write schema: %v", err)
		}
		return manifest.ExitOK
	}
	return c.failf(manifest.ExitUsage, "usage: arca schema [NAME]")
}
