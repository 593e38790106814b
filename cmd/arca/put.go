package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/vault"
)

func putCommand() *command {
	var (
		asJSON *bool
		ifv    versionFlag
	)
	return &command{
		name: "put", args: "REF < value", summary: "store a secret read from stdin",
		text: "Store the value read from stdin at REF, exactly (no newline is stripped); at a terminal it is read without echo. Creates the record or replaces its value (version + 1); the value it replaces is kept as an earlier version (see arca history).",
		examples: []string{"printf %s 'hunter2' | arca put arca://app/db", "arca put arca://app/tls-key < key.pem",
			"arca put --if-version 0 arca://app/db < v.txt # only if it does not exist yet"},
		exits: writeExits,
		flags: withJSON(&asJSON, "print the result as JSON (serve's result.put)", func(fs *flag.FlagSet) { ifVersionFlag(fs, &ifv) }),
		run: func(ctx context.Context, c *cli, fs *verbFlags, args []string) error {
			return runPut(ctx, c, fs, args, asJSON, &ifv)
		},
	}
}

func runPut(ctx context.Context, c *cli, fs *verbFlags, args []string, asJSON *bool, ifv *versionFlag) error {
	return c.writeVerb(ctx, fs, args, asJSON, ifv, "value for ", func(ctx context.Context, svc *ops.Service, req ops.Request) (string, any, error) {
		res, err := svc.Put(ctx, req)
		what := map[bool]string{true: "created", false: "updated"}[res.Created]
		return fmt.Sprintf("%s %s version %d in env %s", res.Ref, what, res.Version, res.Env), res, err
	})
}

func rotateCommand() *command {
	var (
		asJSON *bool
		ifv    versionFlag
	)
	return &command{
		name: "rotate", args: "REF < value", summary: "replace an existing secret's value, read from stdin",
		text: "Replace the value of a secret that exists with the one read from stdin (version + 1, rotated_at set); a ref that is not stored is not found. The value it replaces is kept as an earlier version: arca rollback undoes a bad rotation.",
		examples: []string{"openssl rand -hex 32 | arca rotate arca://app/api-token",
			"openssl rand -hex 32 | arca rotate --if-version 4 arca://app/api-token # only if still at version 4"},
		exits: writeExits,
		flags: withJSON(&asJSON, "print the result as JSON (serve's result.rotate)", func(fs *flag.FlagSet) { ifVersionFlag(fs, &ifv) }),
		run: func(ctx context.Context, c *cli, fs *verbFlags, args []string) error {
			return runRotate(ctx, c, fs, args, asJSON, &ifv)
		},
	}
}

func runRotate(ctx context.Context, c *cli, fs *verbFlags, args []string, asJSON *bool, ifv *versionFlag) error {
	return c.writeVerb(ctx, fs, args, asJSON, ifv, "new value for ", func(ctx context.Context, svc *ops.Service, req ops.Request) (string, any, error) {
		res, err := svc.Rotate(ctx, req)
		return fmt.Sprintf("%s rotated to version %d in env %s", res.Ref, res.Version, res.Env), res, err
	})
}

// writeVerb runs put or rotate: REF, the value from stdin, then op, whose
// summary line goes to stdout (with --json, its result as serve's schema
// gives it). At a terminal, what could not store the
// value is refused before the prompt (beforePrompt).
func (c *cli) writeVerb(ctx context.Context, fs *verbFlags, args []string, asJSON *bool, ifv *versionFlag, prompt string, op func(context.Context, *ops.Service, ops.Request) (string, any, error)) error {
	pos, err := c.parse(fs, args, 1)
	if err != nil {
		return err
	}
	svc, cfg, done, err := c.serviceConfig(fs.co)
	if err != nil {
		return err
	}
	defer done()
	if c.stdinTTY {
		if err := c.beforePrompt(cfg, fs.co, pos[0]); err != nil {
			return err
		}
	}
	val, err := c.readValue(prompt + pos[0] + ": ")
	if err != nil {
		return err
	}
	req := ops.Request{Ref: pos[0], IfVersion: ifv.ptr()}
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
	if err != nil || vc.Kind != ops.KindFile {
		return err
	}
	st, err := c.kinds().Open(name, vc, c.now)
	if err != nil {
		return err
	}
	return st.Close()
}

func rmCommand() *command {
	var (
		asJSON *bool
		ifv    versionFlag
	)
	return &command{
		name: "rm", args: "REF", summary: "delete a secret",
		text:     "Delete the secret at REF. While the vault's keep_deleted has not passed it can be brought back (arca undelete); arca destroy erases it for good.",
		examples: []string{"arca rm arca://app/old-token", "arca rm --if-version 3 arca://app/old-token # only if still at version 3"}, exits: writeExits,
		flags: withJSON(&asJSON, "print the result as JSON (serve's result.rm)", func(fs *flag.FlagSet) { ifVersionFlag(fs, &ifv) }),
		run: func(ctx context.Context, c *cli, fs *verbFlags, args []string) error {
			return runRm(ctx, c, fs, args, asJSON, &ifv)
		},
	}
}

func runRm(ctx context.Context, c *cli, fs *verbFlags, args []string, asJSON *bool, ifv *versionFlag) error {
	return c.vaultVerb(ctx, fs, args, 1, func(ctx context.Context, svc *ops.Service, pos []string) error {
		res, err := svc.Rm(ctx, ops.Request{Ref: pos[0], IfVersion: ifv.ptr()})
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
