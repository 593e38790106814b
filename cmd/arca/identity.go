package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/access"
	"github.com/arca-secrets/arca/vault/identity"
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
		subs: []*command{identityRotateCommand(), identityPassphraseCommand()},
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

// identityPassphraseCommand is `arca identity passphrase [--remove]`.
func identityPassphraseCommand() *command {
	var remove *bool
	return &command{
		name: "passphrase", summary: "add, change or remove the identity file's passphrase",
		text: "Protect the identity file by a passphrase, or change it (the old one is asked first), in age's scrypt format: age -d opens it too. " +
			"--remove writes the identity plain again. The file is replaced whole (a temp file beside it, mode 0600, synced, renamed): protecting it never leaves the key in the clear on disk. " +
			"Passphrases are asked on the terminal without echo, a new one twice, or read from the first line of $ARCA_PASSPHRASE_FILE (mode 0600); " +
			"a change reads the current one from $ARCA_PASSPHRASE_FILE and the new one from $ARCA_NEW_PASSPHRASE_FILE.",
		examples: []string{"arca identity passphrase", "arca identity passphrase --remove"},
		exits:    plainExits,
		flags: func(fs *flag.FlagSet) {
			remove = fs.Bool("remove", false, "remove the passphrase: the identity file is written plain")
		},
		run: func(_ context.Context, c *cli, fs *verbFlags, args []string) error {
			noJSON := new(bool)
			return c.unauditedVerb(fs, args, noJSON, func(svc *ops.Service, _ common) (any, func() error, error) {
				path, err := identityPath(svc)
				if err != nil {
					return nil, nil, err
				}
				if path == identity.KeyPath {
					return nil, nil, opErrorf("the identity is in $%s: it has no file to protect", identity.KeyEnv)
				}
				next := c.passphrase(true)
				if b, err := os.ReadFile(path); err == nil && identity.Protected(b) {
					next = c.newPassphrase() // a change: the current one is asked first
				}
				if *remove {
					next = nil
				}
				if err := identity.SetPassphrase(path, c.passphrase(false), next); err != nil {
					return nil, nil, opErrorf("%v", err)
				}
				done := map[bool]string{false: "protected by a passphrase", true: "written plain, its passphrase removed"}
				return nil, func() error {
					_, err := fmt.Fprintf(c.stdout, "identity file %s %s\n", path, done[*remove])
					return err
				}, nil
			})
		},
	}
}

// identityPath is the identity file the process context's env's vault
// opens with; nothing is read.
func identityPath(svc *ops.Service) (string, error) {
	env, err := svc.ResolveEnv("")
	if err != nil {
		return "", err
	}
	_, vc, err := svc.Config().VaultFor(env)
	return vc.Identity, err
}
