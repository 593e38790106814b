package main

import (
	"fmt"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/vault"
)

func runPut(c *cli, args []string) int {
	return c.writeVerb(args, "put", "value for ", func(svc *ops.Service, req ops.Request) (string, error) {
		res, err := svc.Put(c.ctx, req)
		what := map[bool]string{true: "created", false: "updated"}[res.Created]
		return fmt.Sprintf("%s %s version %d in env %s", res.Ref, what, res.Version, res.Env), err
	})
}

func runRotate(c *cli, args []string) int {
	return c.writeVerb(args, "rotate", "new value for ", func(svc *ops.Service, req ops.Request) (string, error) {
		res, err := svc.Rotate(c.ctx, req)
		return fmt.Sprintf("%s rotated to version %d in env %s", res.Ref, res.Version, res.Env), err
	})
}

// writeVerb runs put or rotate: REF, the value from stdin, then op, whose
// summary line goes to stdout.
func (c *cli) writeVerb(args []string, verb, prompt string, op func(*ops.Service, ops.Request) (string, error)) int {
	return c.vaultVerb(args, verb, "REF < value", 1, nil, func(svc *ops.Service, pos []string) int {
		val, err := c.readValue(prompt + pos[0] + ": ")
		if err != nil {
			return c.fail(err)
		}
		summary, err := op(svc, ops.Request{Ref: pos[0], Value: vault.NewSecret(val)})
		if err != nil {
			return c.fail(err)
		}
		fmt.Fprintln(c.stdout, summary)
		return manifest.ExitOK
	})
}

func runRm(c *cli, args []string) int {
	return c.vaultVerb(args, "rm", "REF", 1, nil, func(svc *ops.Service, pos []string) int {
		res, err := svc.Rm(c.ctx, ops.Request{Ref: pos[0]})
		if err != nil {
			return c.fail(err)
		}
		fmt.Fprintf(c.stdout, "%s removed from env %s (was version %d)\n", res.Ref, res.Env, res.Version)
		return manifest.ExitOK
	})
}
