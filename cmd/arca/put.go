package main

import (
	"context"
	"fmt"

	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/backend"
	"github.com/arca-secrets/arca/vault"
)

func runPut(ctx context.Context, c *cli, args []string) error {
	return c.writeVerb(ctx, args, "put", "value for ", func(ctx context.Context, svc *ops.Service, req ops.Request) (string, any, error) {
		res, err := svc.Put(ctx, req)
		what := map[bool]string{true: "created", false: "updated"}[res.Created]
		return fmt.Sprintf("%s %s version %d in env %s", res.Ref, what, res.Version, res.Env), res, err
	})
}

func runRotate(ctx context.Context, c *cli, args []string) error {
	return c.writeVerb(ctx, args, "rotate", "new value for ", func(ctx context.Context, svc *ops.Service, req ops.Request) (string, any, error) {
		res, err := svc.Rotate(ctx, req)
		return fmt.Sprintf("%s rotated to version %d in env %s", res.Ref, res.Version, res.Env), res, err
	})
}

// writeVerb runs put or rotate: REF, the value from stdin, then op, whose
// summary line goes to stdout (with --json, its result as serve's schema
// gives it). At a terminal, what could not store the
// value is refused before the prompt (beforePrompt).
func (c *cli) writeVerb(ctx context.Context, args []string, verb, prompt string, op func(context.Context, *ops.Service, ops.Request) (string, any, error)) error {
	var co common
	fs := c.flags(verb, "REF < value", &co)
	asJSON := fs.Bool("json", false, "print the result as JSON (serve's result."+verb+")")
	pos, err := c.parse(fs, args, 1)
	if err != nil {
		return err
	}
	svc, cfg, done, err := c.serviceConfig(co)
	if err != nil {
		return err
	}
	defer done()
	if c.stdinTTY {
		if err := c.beforePrompt(cfg, co, pos[0]); err != nil {
			return err
		}
	}
	val, err := c.readValue(prompt + pos[0] + ": ")
	if err != nil {
		return err
	}
	req := ops.Request{Ref: pos[0]}
	req.SetValue(vault.NewSecret(val))
	summary, res, err := op(ctx, svc, req)
	if err != nil {
		return err
	}
	if *asJSON {
		return c.printJSON(res)
	}
	fmt.Fprintln(c.stdout, summary)
	return nil
}

// beforePrompt refuses, before anyone types a value at the terminal, a
// write whose value could not be stored: a ref that does not parse, an env
// that does not resolve or has no vault, a file vault that does not open
// (opening one is cheap; a shared vault is left to the op, which asks the
// network). The errors are the op's own, for the same reasons; they are not
// audited, as a usage error is not: nothing was asked of a vault.
// Guardrails are left to the op, so that a denial is audited.
func (c *cli) beforePrompt(cfg *ops.Config, co common, refArg string) error {
	r, err := ops.ParseRef(refArg)
	if err != nil {
		return err
	}
	env, err := cfg.ResolveEnv(r.Env, "", c.contextEnv(co))
	if err != nil {
		return err
	}
	name, vc, err := cfg.VaultFor(env)
	if err != nil || vc.Kind != "file" {
		return err
	}
	st, err := backend.Kinds{}.Open(name, vc, c.now)
	if err != nil {
		return err
	}
	return st.Close()
}

func runRm(ctx context.Context, c *cli, args []string) error {
	var asJSON *bool
	jsonFlag := func(fs *verbFlags) { asJSON = fs.Bool("json", false, "print the result as JSON (serve's result.rm)") }
	return c.vaultVerb(ctx, args, "rm", "REF", 1, jsonFlag, func(ctx context.Context, svc *ops.Service, pos []string) error {
		res, err := svc.Rm(ctx, ops.Request{Ref: pos[0]})
		if err != nil {
			return err
		}
		if *asJSON {
			return c.printJSON(res)
		}
		fmt.Fprintf(c.stdout, "%s removed from env %s (was version %d)\n", res.Ref, res.Env, res.Version)
		return nil
	})
}
