package main

import (
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
)

func runGet(c *cli, args []string) int {
	return c.vaultVerb(args, "get", "REF", 1, nil, func(svc *ops.Service, pos []string) int {
		res, err := svc.Get(c.ctx, ops.Request{Ref: pos[0]})
		if err != nil {
			return c.fail(err)
		}
		out := res.Value.Reveal()
		if c.stdoutTTY {
			out = append(out[:len(out):len(out)], '\n')
		}
		if _, err := c.stdout.Write(out); err != nil {
			return c.failf(manifest.ExitOpError, "write value to stdout: %v", err)
		}
		return manifest.ExitOK
	})
}
