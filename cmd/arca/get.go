package main

import (
	"context"

	"github.com/arca-secrets/arca/ops"
)

func runGet(ctx context.Context, c *cli, args []string) error {
	return c.vaultVerb(ctx, args, "get", "REF", 1, nil, func(ctx context.Context, svc *ops.Service, pos []string) error {
		res, err := svc.Get(ctx, ops.Request{Ref: pos[0]})
		if err != nil {
			return err
		}
		out := res.Value.Reveal()
		if c.stdoutTTY {
			out = append(out[:len(out):len(out)], '\n')
		}
		if _, err := c.stdout.Write(out); err != nil {
			return opErrorf("write value to stdout: %v", err)
		}
		return nil
	})
}
