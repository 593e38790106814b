package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
)

func runInit(_ context.Context, c *cli, args []string) error {
	return c.unauditedVerb(args, "init", "print what was made or kept as JSON", func(svc *ops.Service, _ common) (any, func() error, error) {
		res, err := svc.Init("")
		return initResultJSON(res), func() error {
			kept := map[bool]string{true: "created", false: "kept existing"}
			fmt.Fprintf(c.stdout, "identity: %s %s\n", kept[res.IdentityCreated], res.IdentityPath)
			fmt.Fprintf(c.stdout, "public key: %s\n", res.Recipient)
			fmt.Fprintf(c.stdout, "vault for env %s: %s %s\n", res.Env, kept[res.VaultCreated], res.VaultPath)
			return nil
		}, err
	})
}

func runVersion(_ context.Context, c *cli, args []string) error {
	if helpAsked(args) {
		fmt.Fprintln(c.stdout, "usage: arca version [--json] (or arca --version)")
		printTopic(c.stdout, "version", func(w io.Writer) {
			fmt.Fprintln(w, "  -json\n    \tprint the version and the protocol as JSON")
		})
		return flag.ErrHelp
	}
	switch {
	case len(args) == 1 && (args[0] == "--json" || args[0] == "-json"):
		return c.printJSON(struct {
			Version  string `json:"version"`
			Protocol string `json:"protocol"`
		}{manifest.Version, manifest.Protocol})
	case len(args) != 0:
		return usagef("usage: arca version [--json]")
	}
	fmt.Fprintf(c.stdout, "arca %s (protocol %s)\n", manifest.Version, manifest.Protocol)
	return nil
}
