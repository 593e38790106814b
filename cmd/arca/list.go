package main

import (
	"encoding/json"
	"fmt"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
)

func runList(c *cli, args []string) int {
	var asJSON *bool
	jsonFlag := func(fs *verbFlags) { asJSON = fs.Bool("json", false, "print the result as JSON") }
	return c.vaultVerb(args, "list", "", 0, jsonFlag, func(svc *ops.Service, _ []string) int {
		res, err := svc.List(c.ctx, ops.Request{})
		if err != nil {
			return c.fail(err)
		}
		if *asJSON {
			return c.printJSON(res)
		}
		for _, r := range res.Records {
			rot := ""
			if !r.RotatedAt.IsZero() {
				rot = "  rotated " + r.RotatedAt.String()
			}
			fmt.Fprintf(c.stdout, "%s  version %d  updated %s%s\n", r.Ref, r.Version, r.UpdatedAt, rot)
		}
		if res.Truncated {
			c.failf(0, "%d more records not listed (at most %d are)", res.Omitted, manifest.MaxListRows)
		}
		return manifest.ExitOK
	})
}

// runCheck probes the vault. A problem found exits 1, so scripts can gate
// on it; the op itself succeeded and is audited so.
func runCheck(c *cli, args []string) int {
	var asJSON *bool
	jsonFlag := func(fs *verbFlags) { asJSON = fs.Bool("json", false, "print the result as JSON") }
	return c.vaultVerb(args, "check", "", 0, jsonFlag, func(svc *ops.Service, _ []string) int {
		res, err := svc.Check(c.ctx, ops.Request{})
		if err != nil {
			return c.fail(err)
		}
		status := manifest.ExitOK
		if !res.Healthy {
			status = manifest.ExitOpError
		}
		if *asJSON {
			if st := c.printJSON(res); st != 0 {
				return st
			}
			return status
		}
		health := map[bool]string{true: "healthy", false: "UNHEALTHY"}[res.Healthy]
		fmt.Fprintf(c.stdout, "env %s: vault %s (%s): %s, %d records\n", res.Env, res.Vault, res.Kind, health, res.Records)
		for _, i := range res.Info {
			fmt.Fprintf(c.stdout, "  %s\n", i)
		}
		for _, p := range res.Problems {
			fmt.Fprintf(c.stdout, "  problem: %s\n", p)
		}
		return status
	})
}

func (c *cli) printJSON(v any) int {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return c.failf(manifest.ExitOpError, "encode result: %v", err)
	}
	if _, err := c.stdout.Write(append(b, '\n')); err != nil {
		return c.failf(manifest.ExitOpError, "write result: %v", err)
	}
	return 0
}
