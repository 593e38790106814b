package main

import (
	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/serve"
)

// runServe runs the request loop. From here on stderr is the audit wire:
// even a failure to start is reported as an event line, never as text.
func runServe(c *cli, args []string) int {
	var co common
	if _, st := c.parse(c.flags("serve", "", &co), args, 0); st >= 0 {
		return st
	}
	cfg, err := ops.LoadConfig(co.config, c.getenv)
	if err != nil {
		w := audit.NewWriter(c.stderr, audit.SourceServe, c.now)
		_ = w.Write(audit.Event{Event: "stop", Message: "cannot start: " + err.Error()})
		return manifest.ExitStatus(ops.CodeOf(err))
	}
	return serve.Run(c.ctx, serve.Options{
		Stdin: c.stdin, Stdout: c.stdout, Stderr: c.stderr,
		Config: cfg, Env: c.contextEnv(co), Now: c.now,
	})
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
