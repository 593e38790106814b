package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/access"
	"github.com/arca-secrets/arca/ops/bulk"
)

// vaultCommand is `arca vault recipients add|rm|list` and `arca vault
// rekey` (who can unwrap a vault's data key, and replacing that key), and
// `arca vault backup|restore` (a vault to one file and back).
func vaultCommand() *command {
	return &command{
		name: "vault", summary: "recipients list|add|rm, rekey, backup FILE, restore FILE",
		text:     "Manage a vault's keys and copies: who can open it (recipients), a new data key (rekey), a backup to one file and a restore from it.",
		examples: []string{"arca vault recipients add age1…", "arca vault rekey --env prod", "arca vault backup prod.vault --env prod"},
		exits:    vaultExits,
		subs:     []*command{recipientsCommand(), rekeyCommand(), backupCommand(), restoreCommand()},
	}
}

func recipientsCommand() *command {
	return &command{
		name: "recipients", summary: "list, add or remove the public keys that open the env's vault",
		text:     "Who can open the env's vault: the age public keys its data key is wrapped to. list prints them, add and rm change them.",
		examples: []string{"arca vault recipients list --env prod", "arca vault recipients add --env prod age1…"},
		exits:    vaultExits,
		subs:     []*command{recipientsListCommand(), recipientsChangeCommand("add"), recipientsChangeCommand("rm")},
	}
}

// recipientsJSON is what --json prints after a change of recipients.
const recipientsJSON = "print the env, its vault and the recipients as JSON"

func recipientsListCommand() *command {
	var asJSON *bool
	return &command{
		name: "list", summary: "list the public keys the data key is wrapped to",
		text:     "List the age public keys the env's data key is wrapped to.",
		examples: []string{"arca vault recipients list --env prod"},
		exits:    vaultExits,
		flags:    jsonFlag(&asJSON, recipientsJSON),
		run: func(ctx context.Context, c *cli, fs *verbFlags, args []string) error {
			return c.vaultVerb(ctx, fs, args, 0, func(ctx context.Context, svc *ops.Service, _ []string) error {
				res, err := access.Recipients(ctx, svc, "")
				return c.printTeam(res, err, *asJSON, false)
			})
		},
	}
}

// recipientsChangeCommand is `vault recipients add` or `vault recipients
// rm`, as verb says.
func recipientsChangeCommand(verb string) *command {
	var asJSON *bool
	cmd := &command{
		name: verb, args: "KEY...", exits: vaultExits,
		flags: jsonFlag(&asJSON, recipientsJSON),
		run: func(ctx context.Context, c *cli, fs *verbFlags, args []string) error {
			return c.vaultVerb(ctx, fs, args, anyArgs, func(ctx context.Context, svc *ops.Service, keys []string) error {
				if len(keys) == 0 {
					return usagef("usage: arca %s KEY... [--env ENV]", fs.Name())
				}
				add, rm := keys, []string(nil)
				if verb == "rm" {
					add, rm = nil, keys
				}
				res, err := access.ChangeRecipients(ctx, svc, "", add, rm)
				return c.printTeam(res, err, *asJSON, false)
			})
		},
	}
	if verb == "add" {
		cmd.summary = "wrap the data key to more public keys"
		cmd.text = "Wrap the env's data key to more public keys as well: those identities can then open the vault."
		cmd.examples = []string{"arca vault recipients add --env prod age1…"}
	} else {
		cmd.summary = "stop wrapping the data key to these public keys"
		cmd.text = "Stop wrapping the data key to these keys. Run vault rekey after it, so a removed key cannot read what is stored."
		cmd.examples = []string{"arca vault recipients rm --env prod age1… && arca vault rekey --env prod"}
	}
	return cmd
}

func rekeyCommand() *command {
	var asJSON *bool
	return &command{
		name: "rekey", summary: "make a new data key and re-seal every record under it",
		text:     "Make a new data key and re-seal every record under it, wrapped to the current recipients.",
		examples: []string{"arca vault rekey --env prod"},
		exits:    vaultExits,
		flags:    jsonFlag(&asJSON, recipientsJSON),
		run: func(ctx context.Context, c *cli, fs *verbFlags, args []string) error {
			return c.vaultVerb(ctx, fs, args, 0, func(ctx context.Context, svc *ops.Service, _ []string) error {
				res, err := access.Rekey(ctx, svc, "")
				if err == nil && !*asJSON {
					fmt.Fprintf(c.stdout, "env %s: new data key; %d records re-sealed\n", res.Env, res.Resealed)
				}
				return c.printTeam(res, err, *asJSON, true)
			})
		},
	}
}

func backupCommand() *command {
	return &command{
		name: "backup", args: "FILE", summary: "write the env's whole vault to one encrypted file",
		text:     "Write the env's whole vault to FILE, every kept version and soft-deleted name too: one encrypted file that opens with the identity of any of its recipients.",
		examples: []string{"arca vault backup --env prod prod.vault && arca check prod.vault # a backup, checked"},
		exits:    vaultExits,
		run: func(ctx context.Context, c *cli, fs *verbFlags, args []string) error {
			return c.vaultVerb(ctx, fs, args, 1, func(ctx context.Context, svc *ops.Service, pos []string) error {
				c.bulkMemory()
				res, err := bulk.Backup(ctx, svc, "", pos[0])
				if err == nil {
					what := fmt.Sprintf("%d records", res.Records)
					if held := res.Held(); held != "" {
						what += " (" + held + ")"
					}
					c.warnf("env %s: %s backed up to %s, which opens with the identity of any of the vault's %d recipients (verify it: arca check --env %s %s)", res.Env, what, res.Path, len(res.Recipients), res.Env, res.Path)
				}
				return err
			})
		},
	}
}

func restoreCommand() *command {
	var overwrite, dryRun, asJSON *bool
	return &command{
		name: "restore", args: "FILE", summary: "write the records of a backup file into the env's vault",
		text:     "Write the records of a backup FILE into the env's vault, with their versions, earlier versions and times, and its soft-deleted names. Records that exist are skipped unless --overwrite, which never lowers a version; --dry-run writes nothing.",
		examples: []string{"arca vault restore --dry-run prod.vault", "arca vault restore --overwrite prod.vault"},
		exits:    vaultExits,
		flags: func(fs *flag.FlagSet) {
			overwrite = fs.Bool("overwrite", false, "replace records that exist with the backup's (else they are skipped)")
			dryRun = fs.Bool("dry-run", false, "list what would be created, overwritten or skipped; write nothing")
			asJSON = fs.Bool("json", false, "print what was done (or would be) as JSON")
		},
		run: func(ctx context.Context, c *cli, fs *verbFlags, args []string) error {
			return c.vaultVerb(ctx, fs, args, 1, func(ctx context.Context, svc *ops.Service, pos []string) error {
				c.bulkMemory()
				res, err := bulk.Restore(ctx, svc, "", pos[0], *overwrite, *dryRun)
				if err != nil {
					return err
				}
				return c.printBulk(res, *asJSON)
			})
		},
	}
}

// printTeam prints the recipients after a team op, one per line, or as
// JSON (with the records re-sealed, after a rekey).
func (c *cli) printTeam(res access.TeamResult, err error, asJSON, rekey bool) error {
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
