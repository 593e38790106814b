package main

import (
	"context"
	"fmt"

	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/vault"
)

func runPut(ctx context.Context, c *cli, args []string) error {
	return c.writeVerb(ctx, args, "put", "value for ", func(ctx context.Context, svc *ops.Service, req ops.Request) (string, error) {
		res, err := svc.Put(ctx, req)
		what := map[bool]string{true: "created", false: "updated"}[res.Created]
		return fmt.Sprintf("%s %s version %d in env %s", res.Ref, what, res.Version, res.Env), err
	})
}

func runRotate(ctx context.Context, c *cli, args []string) error {
	return c.writeVerb(ctx, args, "rotate", "new value for ", func(ctx context.Context, svc *ops.Service, req ops.Request) (string, error) {
		res, err := svc.Rotate(ctx, req)
		return fmt.Sprintf("%s rotated to version %d in env %s", res.Ref, res.Version, res.Env), err
	})
}

// writeVerb runs put or rotate: REF, the value from stdin, then op, whose
// summary line goes to stdout.
func (c *cli) writeVerb(ctx context.Context, args []string, verb, prompt string, op func(context.Context, *ops.Service, ops.Request) (string, error)) error {
	return c.vaultVerb(ctx, args, verb, "REF < value", 1, nil, func(ctx context.Context, svc *ops.Service, pos []string) error {
		val, err := c.readValue(prompt + pos[0] + ": ")
		if err != nil {
			return err
		}
		summary, err := op(ctx, svc, ops.Request{Ref: pos[0], Value: vault.NewSecret(val)})
		if err != nil {
			return err
		}
		fmt.Fprintln(c.stdout, summary)
		return nil
	})
}

func runRm(ctx context.Context, c *cli, args []string) error {
	return c.vaultVerb(ctx, args, "rm", "REF", 1, nil, func(ctx context.Context, svc *ops.Service, pos []string) error {
		res, err := svc.Rm(ctx, ops.Request{Ref: pos[0]})
		if err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "%s removed from env %s (was version %d)\n", res.Ref, res.Env, res.Version)
		return nil
	})
}
