package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/arca-secrets/arca/internal/termsafe"
	"github.com/arca-secrets/arca/ops"
)

// statusCommand is `arca status [--json]`: what is in effect for this
// process (config, env, audit file) and each env's vault, opened and listed.
func statusCommand() *command {
	var asJSON *bool
	return &command{
		name: "status", summary: "show the config, env, audit file and each env's vault in effect, and whether each answers",
		text:     "Show what is in effect: the config file and how it was found, the env and why, the audit file, and each env's vault, whether it opens, its identity, public key and recipients. Reads no value; not audited.",
		examples: []string{"arca status", "arca --config team.toml status --json"},
		exits:    plainExits,
		flags:    jsonFlag(&asJSON, "print the status as JSON"),
		run: func(ctx context.Context, c *cli, fs *verbFlags, args []string) error {
			return c.unauditedVerb(fs, args, asJSON, func(svc *ops.Service, co common) (any, func() error, error) {
				res, err := svc.Status(ctx, c.envFrom(co))
				return res, func() error { return printStatus(c.stdout, res) }, err
			})
		},
	}
}

// unauditedVerb runs a verb that takes the common flags and --json (bound
// to asJSON) and neither reads a value nor writes: on an unaudited
// service, fn returns the result (printed as JSON with --json) and how to
// print it as text.
func (c *cli) unauditedVerb(fs *verbFlags, args []string, asJSON *bool, fn func(*ops.Service, common) (any, func() error, error)) error {
	if _, err := c.parse(fs, args, 0); err != nil {
		return err
	}
	co := fs.co
	svc, done, err := c.unaudited(co)
	if err != nil {
		return err
	}
	defer done()
	res, text, err := fn(svc, co)
	switch {
	case err != nil:
		return err
	case *asJSON:
		return c.printJSON(res)
	}
	return text()
}

// envFrom says where the process context's env came from, "" when none.
func (c *cli) envFrom(co common) string {
	switch {
	case co.env != "":
		return "--env"
	case c.getenv("ARCA_ENV") != "":
		return "$ARCA_ENV"
	}
	return ""
}

// unaudited is a service for a verb that reads no value and writes
// nothing: the config, no audit file.
func (c *cli) unaudited(co common) (*ops.Service, func(), error) {
	cfg, err := ops.LoadConfig(co.config, c.getenv)
	if err != nil {
		return nil, nil, err
	}
	svc := ops.New(ops.Options{Config: cfg, Backends: c.kinds(), Keys: c.identityKeys(), Now: c.now, Env: c.contextEnv(co)})
	return svc, func() { svc.Close() }, nil
}

// originText says how the config was found, for a person.
func originText(origin string) string {
	switch origin {
	case "pinned":
		return "pinned by --config or $ARCA_CONFIG"
	case "implicit":
		return "./arca.toml in the working directory, which replaces the user's config"
	case "user":
		return "the user's config"
	}
	return "no config file: built-in defaults"
}

// printStatus prints r for a person: a line for each thing in effect,
// each escaped (termsafe.Escape), as a member's answer or a path may hold
// anything.
func printStatus(w io.Writer, r ops.StatusResult) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	line := func(label, text string) { fmt.Fprintf(tw, "%s\t%s\n", label, termsafe.Escape(text)) }
	cfg := r.Config
	if cfg == "" {
		cfg = "-"
	}
	line("config:", fmt.Sprintf("%s (%s)", cfg, originText(r.ConfigOrigin)))
	env := fmt.Sprintf("%s (from %s)", r.Env, r.EnvFrom)
	if r.EnvProblem != "" {
		env += ": " + r.EnvProblem
	}
	line("env:", env)
	line("audit file:", r.AuditFile)
	for _, e := range r.Envs {
		where := e.Path
		if e.Kind == ops.KindEtcd {
			where = strings.Join(e.Endpoints, ",") + " prefix " + e.Prefix
		}
		state := fmt.Sprintf("ok, %d records", e.Records)
		if !e.Reachable {
			state = "PROBLEM: " + e.Problem
		}
		fmt.Fprintln(tw)
		if e.Vault == "" { // its config did not name one arca could open
			line("env "+termsafe.Escape(e.Name)+":", "no vault")
			line("  state:", state)
			continue
		}
		line("env "+termsafe.Escape(e.Name)+":", fmt.Sprintf("vault %s (%s) %s", e.Vault, e.Kind, where))
		line("  state:", state)
		line("  identity:", e.Identity)
		if e.PublicKey != "" {
			line("  public key:", e.PublicKey)
		}
		for i, rc := range e.Recipients {
			label := "  "
			if i == 0 {
				label = "  recipients:"
			}
			line(label, rc)
		}
	}
	return tw.Flush()
}
