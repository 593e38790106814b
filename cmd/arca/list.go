package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strings"

	"github.com/arca-secrets/arca/internal/termsafe"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/bulk"
	"github.com/arca-secrets/arca/ops/ref"
)

func listCommand() *command {
	var asJSON, deleted *bool
	return &command{
		name: "list", args: "[PREFIX]", summary: "list secrets and their metadata, never values",
		text:     "List the env's records, sorted by ref, never a value. PREFIX keeps a namespace (app), the start of a name (app/db) or a glob ('*/token'). In a pipe: one tab-separated line a record (ref, version, updated, rotated; with --deleted, then when it was removed or -); on a terminal: a table.",
		examples: []string{"arca list", "arca list app", "arca list --env prod '*/token'", "arca list --json", "arca list --deleted # removed secrets arca undelete can bring back"},
		exits:    vaultExits,
		flags: withJSON(&asJSON, "print the result as JSON", func(fs *flag.FlagSet) {
			deleted = fs.Bool("deleted", false, "list the removed secrets that can still be undeleted too")
		}),
		run: func(ctx context.Context, c *cli, fs *verbFlags, args []string) error {
			return runList(ctx, c, fs, args, asJSON, deleted)
		},
	}
}

func runList(ctx context.Context, c *cli, fs *verbFlags, args []string, asJSON, deleted *bool) error {
	return c.vaultVerb(ctx, fs, args, optionalArg, func(ctx context.Context, svc *ops.Service, pos []string) error {
		match, err := listFilter(pos)
		if err != nil {
			return err
		}
		res, err := svc.List(ctx, ops.Request{Deleted: *deleted})
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
		} else if err = printList(c.stdout, res.Records, c.stdoutTTY, *deleted, c.now()); err != nil {
			err = opErrorf("write the list: %v", err)
		}
		if err == nil && res.Truncated {
			c.warnf("%d more records not listed (at most %d are)", res.Omitted, manifest.MaxListRows)
		}
		return err
	})
}

func checkCommand() *command {
	var asJSON *bool
	return &command{
		name: "check", args: "[BACKUP-FILE]", summary: "probe the vault, or a backup file: key, records, permissions",
		text:     "Probe the env's vault, or a backup file: the identity opens it, every record and every earlier version kept authenticates, files have safe modes; soft-deleted names past keep_deleted are erased. A problem found exits 1.",
		examples: []string{"arca check", "arca check backup.vault"},
		exits:    "0 healthy; 1 a problem found, or an operation error; 2 usage",
		flags:    jsonFlag(&asJSON, "print the result as JSON"),
		run: func(ctx context.Context, c *cli, fs *verbFlags, args []string) error {
			return runCheck(ctx, c, fs, args, asJSON)
		},
	}
}

// runCheck probes the vault, or the backup file it is given. A problem found exits 1, so scripts can gate
// on it; the op itself succeeded and is audited so.
func runCheck(ctx context.Context, c *cli, fs *verbFlags, args []string, asJSON *bool) error {
	return c.vaultVerb(ctx, fs, args, optionalArg, func(ctx context.Context, svc *ops.Service, pos []string) error {
		var res ops.CheckResult
		var err error
		switch {
		case len(pos) == 1 && strings.HasPrefix(pos[0], ref.Scheme):
			// A ref is a mistake worth naming: check probes a whole vault.
			return usagef("usage: arca check [--config FILE] [--env ENV] [--json] [BACKUP-FILE]")
		case len(pos) == 1:
			res, err = bulk.CheckBackup(ctx, svc, "", pos[0])
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
		// A line of the report holds what members and files said: each is
		// escaped, so that none can pass for a line of its own.
		health := map[bool]string{true: "healthy", false: "UNHEALTHY"}[res.Healthy]
		fmt.Fprintf(c.stdout, "env %s: vault %s (%s): %s, %d records\n", termsafe.Escape(res.Env), termsafe.Escape(res.Vault), res.Kind, health, res.Records)
		if h := checkedHistory(res); h != "" {
			fmt.Fprintf(c.stdout, "  history: %s\n", h)
		}
		for _, i := range res.Info {
			fmt.Fprintf(c.stdout, "  %s\n", termsafe.Escape(i))
		}
		for _, p := range res.Problems {
			fmt.Fprintf(c.stdout, "  problem: %s\n", termsafe.Escape(p))
		}
		return unhealthy
	})
}

// checkedHistory is what a check found of history, for its report: the
// earlier versions it authenticated and the soft-deleted names past
// keep_deleted it erased; "" when it found neither.
func checkedHistory(res ops.CheckResult) string {
	var parts []string
	if res.Versions > 0 {
		parts = append(parts, counted(res.Versions, "earlier version", "earlier versions")+" authenticated")
	}
	if res.Erased > 0 {
		parts = append(parts, counted(res.Erased, "soft-deleted name", "soft-deleted names")+" past keep_deleted erased")
	}
	return strings.Join(parts, "; ")
}

// counted is "1 " and one, or n and many.
func counted(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
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
