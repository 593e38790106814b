package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/ref"
)

func runList(ctx context.Context, c *cli, args []string) error {
	var asJSON *bool
	jsonFlag := func(fs *verbFlags) { asJSON = fs.Bool("json", false, "print the result as JSON") }
	return c.vaultVerb(ctx, args, "list", "[PREFIX]", optionalArg, jsonFlag, func(ctx context.Context, svc *ops.Service, pos []string) error {
		match, err := listFilter(pos)
		if err != nil {
			return err
		}
		res, err := svc.List(ctx, ops.Request{})
		if err != nil {
			return err
		}
		kept := res.Records[:0]
		for _, r := range res.Records {
			if match(strings.TrimPrefix(r.Ref, ref.Scheme)) {
				kept = append(kept, r)
			}
		}
		res.Records = kept
		if *asJSON {
			err = c.printJSON(res)
		} else if err = printList(c.stdout, res.Records, c.stdoutTTY, c.now()); err != nil {
			err = opErrorf("write the list: %v", err)
		}
		if err == nil && res.Truncated {
			c.warnf("%d more records not listed (at most %d are)", res.Omitted, manifest.MaxListRows)
		}
		return err
	})
}

// runCheck probes the vault, or the backup file it is given. A problem found exits 1, so scripts can gate
// on it; the op itself succeeded and is audited so.
func runCheck(ctx context.Context, c *cli, args []string) error {
	var asJSON *bool
	jsonFlag := func(fs *verbFlags) { asJSON = fs.Bool("json", false, "print the result as JSON") }
	return c.vaultVerb(ctx, args, "check", "[BACKUP-FILE]", optionalArg, jsonFlag, func(ctx context.Context, svc *ops.Service, pos []string) error {
		var res ops.CheckResult
		var err error
		switch {
		case len(pos) == 1 && strings.HasPrefix(pos[0], ref.Scheme):
			// A ref is a mistake worth naming: check probes a whole vault.
			return usagef("usage: arca check [--config FILE] [--env ENV] [--json] [BACKUP-FILE]")
		case len(pos) == 1:
			res, err = svc.CheckBackup(ctx, "", pos[0])
		default:
			res, err = svc.Check(ctx, ops.Request{})
		}
		if err != nil {
			return err
		}
		var unhealthy error
		if !res.Healthy {
			// The report on stdout says what is wrong.
			unhealthy = reported{opErrorf("vault is unhealthy")}
		}
		if *asJSON {
			if err := c.printJSON(res); err != nil {
				return err
			}
			return unhealthy
		}
		health := map[bool]string{true: "healthy", false: "UNHEALTHY"}[res.Healthy]
		fmt.Fprintf(c.stdout, "env %s: vault %s (%s): %s, %d records\n", res.Env, res.Vault, res.Kind, health, res.Records)
		for _, i := range res.Info {
			fmt.Fprintf(c.stdout, "  %s\n", i)
		}
		for _, p := range res.Problems {
			fmt.Fprintf(c.stdout, "  problem: %s\n", p)
		}
		return unhealthy
	})
}

func (c *cli) printJSON(v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return opErrorf("encode result: %v", err)
	}
	if _, err := c.stdout.Write(append(b, '\n')); err != nil {
		return opErrorf("write result: %v", err)
	}
	return nil
}
