package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/access"
)

// identityCommand is `arca identity [--json]`: the public key of the
// identity the env's vault opens with (what a teammate adds with vault
// recipients add), and the identity file's path; `arca identity rotate`
// replaces that identity in every vault it opens (access.RotateIdentity).
func identityCommand() *command {
	var asJSON *bool
	return &command{
		name: "identity", summary: "print this identity's public key",
		text:     "Print the public key of the identity the env's vault opens with: what a teammate adds with vault recipients add. identity rotate replaces it.",
		examples: []string{"arca identity", "arca identity --env prod --json"},
		exits:    plainExits,
		flags:    jsonFlag(&asJSON, "print the identity's path and public key as JSON"),
		run: func(_ context.Context, c *cli, fs *verbFlags, args []string) error {
			return c.unauditedVerb(fs, args, asJSON, func(svc *ops.Service, _ common) (any, func() error, error) {
				res, err := svc.Identity("")
				return res, func() error { _, err := fmt.Fprintln(c.stdout, res.PublicKey); return err }, err
			})
		},
		subs: []*command{identityRotateCommand()},
	}
}

func identityRotateCommand() *command {
	var asJSON *bool
	return &command{
		name: "rotate", summary: "replace the identity with a new one in every vault it opens",
		text:     "Replace the identity with a new one in every vault it opens: the new key is added to each, the new identity takes the identity file's place (the old one kept beside it), then each vault drops the old key and is re-keyed. The identity file opens every vault throughout; a rotation that stops, however it stops, is carried on by running it again.",
		examples: []string{"arca identity rotate", "arca identity rotate --json"},
		exits:    vaultExits,
		flags:    jsonFlag(&asJSON, "print what was rotated as JSON"),
		run: func(ctx context.Context, c *cli, fs *verbFlags, args []string) error {
			return c.vaultVerb(ctx, fs, args, 0, func(ctx context.Context, svc *ops.Service, _ []string) error {
				res, err := access.RotateIdentityAt(ctx, svc, "", c.rotateAt)
				if err != nil {
					return err
				}
				if *asJSON {
					return c.printJSON(res)
				}
				fmt.Fprintf(c.stdout, "identity %s rotated: %s replaces %s in vaults %s\n", res.Path, res.NewKey, res.OldKey, strings.Join(res.Vaults, ", "))
				return nil
			})
		},
	}
}
