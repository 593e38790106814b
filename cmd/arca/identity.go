package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/arca-secrets/arca/ops"
)

// runIdentity is `arca identity [--json]`: the public key of the identity
// the env's vault opens with (what a teammate adds with vault recipients
// add), and the identity file's path; `arca identity rotate` replaces that
// identity in every vault it opens (ops.RotateIdentity).
func runIdentity(ctx context.Context, c *cli, args []string) error {
	if len(args) > 0 && args[0] == "rotate" {
		var asJSON *bool
		jsonFlag := func(fs *verbFlags) { asJSON = fs.Bool("json", false, "print what was rotated as JSON") }
		return c.vaultVerb(ctx, args[1:], "identity rotate", "", 0, jsonFlag, func(ctx context.Context, svc *ops.Service, _ []string) error {
			res, err := svc.RotateIdentity(ctx, "")
			if err != nil {
				return err
			}
			if *asJSON {
				return c.printJSON(res)
			}
			fmt.Fprintf(c.stdout, "identity %s rotated: %s replaces %s in vaults %s\n", res.Path, res.NewKey, res.OldKey, strings.Join(res.Vaults, ", "))
			return nil
		})
	}
	return c.unauditedVerb(args, "identity", "print the identity's path and public key as JSON", func(svc *ops.Service, _ common) (any, func() error, error) {
		res, err := svc.Identity("")
		return res, func() error { _, err := fmt.Fprintln(c.stdout, res.PublicKey); return err }, err
	})
}
