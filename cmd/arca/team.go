package main

import (
	"context"
	"fmt"

	"github.com/arca-secrets/arca/ops"
)

// runVault is `arca vault recipients add|rm|list` and `arca vault rekey`:
// who can unwrap a shared vault's data key, and replacing that key.
func runVault(ctx context.Context, c *cli, args []string) error {
	const usage = "usage: arca vault recipients list|add KEY...|rm KEY... [--env ENV] | arca vault rekey [--env ENV]"
	switch {
	case len(args) >= 2 && args[0] == "recipients" && args[1] == "list":
		return c.vaultVerb(ctx, args[2:], "vault recipients list", "", 0, nil, func(ctx context.Context, svc *ops.Service, _ []string) error {
			res, err := svc.Recipients(ctx, "")
			return c.printTeam(res, err)
		})
	case len(args) >= 2 && args[0] == "recipients" && (args[1] == "add" || args[1] == "rm"):
		verb := "vault recipients " + args[1]
		return c.vaultVerb(ctx, args[2:], verb, "KEY...", anyArgs, nil, func(ctx context.Context, svc *ops.Service, keys []string) error {
			if len(keys) == 0 {
				return usagef("usage: arca %s KEY... [--env ENV]", verb)
			}
			add, rm := keys, []string(nil)
			if args[1] == "rm" {
				add, rm = nil, keys
			}
			res, err := svc.ChangeRecipients(ctx, "", add, rm)
			return c.printTeam(res, err)
		})
	case len(args) >= 1 && args[0] == "rekey":
		return c.vaultVerb(ctx, args[1:], "vault rekey", "", 0, nil, func(ctx context.Context, svc *ops.Service, _ []string) error {
			res, err := svc.Rekey(ctx, "")
			if err == nil {
				fmt.Fprintf(c.stdout, "env %s: new data key; %d records re-sealed\n", res.Env, res.Resealed)
			}
			return c.printTeam(res, err)
		})
	}
	return usagef("%s", usage)
}

// printTeam prints the recipients after a team op, one per line.
func (c *cli) printTeam(res ops.TeamResult, err error) error {
	if err != nil {
		return err
	}
	for _, r := range res.Recipients {
		fmt.Fprintln(c.stdout, r)
	}
	return nil
}
