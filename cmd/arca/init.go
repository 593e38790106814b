package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/access"
	"github.com/arca-secrets/arca/vault/identity"
)

func initCommand() *command {
	var asJSON, protect *bool
	return &command{
		name: "init", summary: "create the identity and the vault (existing ones are kept)",
		text: "Create the age identity and the env's vault; an identity or vault that exists is kept. For a shared vault, init creates it on etcd, wrapped to this identity. " +
			"With --passphrase the new identity file is protected by a passphrase (age's scrypt format: age -d opens it too), asked twice on the terminal or read from $ARCA_PASSPHRASE_FILE; " +
			"an identity that exists unprotected is refused, not changed (arca identity passphrase protects it).",
		examples: []string{"arca init", "arca init --passphrase", "arca init --env prod --config team.toml # the shared vault of env prod"},
		exits:    plainExits,
		flags: func(fs *flag.FlagSet) {
			jsonFlag(&asJSON, "print what was made or kept as JSON")(fs)
			protect = fs.Bool("passphrase", false, "protect a new identity file by a passphrase")
		},
		run: func(_ context.Context, c *cli, fs *verbFlags, args []string) error {
			return runInit(c, fs, args, asJSON, protect)
		},
	}
}

func runInit(c *cli, fs *verbFlags, args []string, asJSON, protect *bool) error {
	return c.unauditedVerb(fs, args, asJSON, func(svc *ops.Service, _ common) (any, func() error, error) {
		var pass identity.Passphrase
		if *protect {
			pass = c.passphrase(true)
		}
		res, err := access.InitWith(svc, "", pass)
		return initResultJSON(res), func() error {
			kept := map[bool]string{true: "created", false: "kept existing"}
			fmt.Fprintf(c.stdout, "identity: %s %s\n", kept[res.IdentityCreated], res.IdentityPath)
			fmt.Fprintf(c.stdout, "public key: %s\n", res.Recipient)
			fmt.Fprintf(c.stdout, "vault for env %s: %s %s\n", res.Env, kept[res.VaultCreated], res.VaultPath)
			return nil
		}, err
	})
}

// versionCommand is `arca version` (or `arca --version`).
func versionCommand() *command {
	var asJSON *bool
	return &command{
		name: "version", summary: "print arca's version", bare: true,
		text:     "Print arca's version and the serve protocol it speaks.",
		examples: []string{"arca --version", "arca version --json"},
		exits:    plainExits,
		flags:    jsonFlag(&asJSON, "print the version and the protocol as JSON"),
		run: func(_ context.Context, c *cli, fs *verbFlags, args []string) error {
			return runVersion(c, fs, args, asJSON)
		},
	}
}

func runVersion(c *cli, fs *verbFlags, args []string, asJSON *bool) error {
	if _, err := c.parse(fs, args, 0); err != nil {
		return err
	}
	if *asJSON {
		return c.printJSON(versionJSON{manifest.Version(), manifest.Protocol})
	}
	fmt.Fprintf(c.stdout, "arca %s (protocol %s)\n", manifest.Version(), manifest.Protocol)
	return nil
}
