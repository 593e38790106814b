package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/backend"
)

// runStatus is `arca status [--json]`: what is in effect for this process
// (config, env, audit file) and each env's vault, opened and listed.
func runStatus(ctx context.Context, c *cli, args []string) error {
	return c.unauditedVerb(args, "status", "print the status as JSON", func(svc *ops.Service, co common) (any, func() error, error) {
		res, err := svc.Status(ctx, c.envFrom(co))
		return res, func() error { return printStatus(c.stdout, res) }, err
	})
}

// unauditedVerb runs a verb that takes the common flags and --json and
// neither reads a value nor writes: on an unaudited service, fn returns
// the result (printed as JSON with --json) and how to print it as text.
func (c *cli) unauditedVerb(args []string, verb, jsonUsage string, fn func(*ops.Service, common) (any, func() error, error)) error {
	var co common
	fs := c.flags(verb, "", &co)
	asJSON := fs.Bool("json", false, jsonUsage)
	if _, err := c.parse(fs, args, 0); err != nil {
		return err
	}
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
	svc := ops.New(ops.Options{Config: cfg, Backends: backend.Kinds{}, Now: c.now, Env: c.contextEnv(co)})
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

func printStatus(w io.Writer, r ops.StatusResult) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	cfg := r.Config
	if cfg == "" {
		cfg = "-"
	}
	fmt.Fprintf(tw, "config:\t%s (%s)\n", cfg, originText(r.ConfigOrigin))
	env := fmt.Sprintf("%s (from %s)", r.Env, r.EnvFrom)
	if r.EnvProblem != "" {
		env += ": " + r.EnvProblem
	}
	fmt.Fprintf(tw, "env:\t%s\n", env)
	fmt.Fprintf(tw, "audit file:\t%s\n", r.AuditFile)
	for _, e := range r.Envs {
		where := e.Path
		if e.Kind == "etcd" {
			where = strings.Join(e.Endpoints, ",") + " prefix " + e.Prefix
		}
		state := fmt.Sprintf("ok, %d records", e.Records)
		if !e.Reachable {
			state = "PROBLEM: " + e.Problem
		}
		fmt.Fprintf(tw, "\nenv %s:\tvault %s (%s) %s\n", e.Name, e.Vault, e.Kind, where)
		fmt.Fprintf(tw, "  state:\t%s\n", state)
		fmt.Fprintf(tw, "  identity:\t%s\n", e.Identity)
		if e.PublicKey != "" {
			fmt.Fprintf(tw, "  public key:\t%s\n", e.PublicKey)
		}
		for i, rc := range e.Recipients {
			label := ""
			if i == 0 {
				label = "recipients:"
			}
			fmt.Fprintf(tw, "  %s\t%s\n", label, rc)
		}
	}
	return tw.Flush()
}
