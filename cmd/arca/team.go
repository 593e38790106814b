package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/arca-secrets/arca/ops"
)

// runVault is `arca vault recipients add|rm|list` and `arca vault rekey`
// (who can unwrap a vault's data key, and replacing that key), and `arca
// vault backup|restore` (a vault to one file and back).
func runVault(ctx context.Context, c *cli, args []string) error {
	var asJSON *bool
	jsonFlag := func(fs *verbFlags) {
		asJSON = fs.Bool("json", false, "print the env, its vault and the recipients as JSON")
	}
	const usage = "usage: arca vault recipients list|add KEY...|rm KEY... [--env ENV] | arca vault rekey [--env ENV] | arca vault backup [--env ENV] FILE | arca vault restore [--env ENV] [--overwrite] [--dry-run] FILE"
	switch {
	case len(args) >= 1 && args[0] == "backup":
		return c.vaultVerb(ctx, args[1:], "vault backup", "FILE", 1, nil, func(ctx context.Context, svc *ops.Service, pos []string) error {
			c.bulkMemory()
			res, err := svc.Backup(ctx, "", pos[0])
			if err == nil {
				c.warnf("env %s: %d records backed up to %s, which opens with the identity of any of the vault's %d recipients (verify it: arca check --env %s %s)", res.Env, res.Records, res.Path, len(res.Recipients), res.Env, res.Path)
			}
			return err
		})
	case len(args) >= 1 && args[0] == "restore":
		var overwrite, dryRun, asJSON *bool
		more := func(fs *verbFlags) {
			overwrite = fs.Bool("overwrite", false, "replace records that exist with the backup's (else they are skipped)")
			dryRun = fs.Bool("dry-run", false, "list what would be created, overwritten or skipped; write nothing")
			asJSON = fs.Bool("json", false, "print what was done (or would be) as JSON")
		}
		return c.vaultVerb(ctx, args[1:], "vault restore", "FILE", 1, more, func(ctx context.Context, svc *ops.Service, pos []string) error {
			c.bulkMemory()
			res, err := svc.Restore(ctx, "", pos[0], *overwrite, *dryRun)
			if err != nil {
				return err
			}
			return c.printBulk(res, *asJSON)
		})
	case len(args) >= 2 && args[0] == "recipients" && args[1] == "list":
		return c.vaultVerb(ctx, args[2:], "vault recipients list", "", 0, jsonFlag, func(ctx context.Context, svc *ops.Service, _ []string) error {
			res, err := svc.Recipients(ctx, "")
			return c.printTeam(res, err, *asJSON, false)
		})
	case len(args) >= 2 && args[0] == "recipients" && (args[1] == "add" || args[1] == "rm"):
		verb := "vault recipients " + args[1]
		return c.vaultVerb(ctx, args[2:], verb, "KEY...", anyArgs, jsonFlag, func(ctx context.Context, svc *ops.Service, keys []string) error {
			if len(keys) == 0 {
				return usagef("usage: arca %s KEY... [--env ENV]", verb)
			}
			add, rm := keys, []string(nil)
			if args[1] == "rm" {
				add, rm = nil, keys
			}
			res, err := svc.ChangeRecipients(ctx, "", add, rm)
			return c.printTeam(res, err, *asJSON, false)
		})
	case len(args) >= 1 && args[0] == "rekey":
		return c.vaultVerb(ctx, args[1:], "vault rekey", "", 0, jsonFlag, func(ctx context.Context, svc *ops.Service, _ []string) error {
			res, err := svc.Rekey(ctx, "")
			if err == nil && !*asJSON {
				fmt.Fprintf(c.stdout, "env %s: new data key; %d records re-sealed\n", res.Env, res.Resealed)
			}
			return c.printTeam(res, err, *asJSON, true)
		})
	}
	if helpAsked(args) {
		fmt.Fprintln(c.stdout, strings.ReplaceAll(usage, " | arca", "\n       arca"))
		printTopic(c.stdout, "vault", nil)
		return flag.ErrHelp
	}
	return usagef("%s", usage)
}

// printTeam prints the recipients after a team op, one per line, or as
// JSON (with the records re-sealed, after a rekey).
func (c *cli) printTeam(res ops.TeamResult, err error, asJSON, rekey bool) error {
	if err != nil {
		return err
	}
	if asJSON {
		out := teamJSON{Env: res.Env, Vault: res.Vault, Recipients: res.Recipients}
		if rekey {
			out.Resealed = &res.Resealed
		}
		return c.printJSON(out)
	}
	for _, r := range res.Recipients {
		fmt.Fprintln(c.stdout, r)
	}
	return nil
}
