package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/backend"
)

func runInit(_ context.Context, c *cli, args []string) error {
	var co common
	if _, err := c.parse(c.flags("init", "", &co), args, 0); err != nil {
		return err
	}
	cfg, err := ops.LoadConfig(co.config, c.getenv)
	if err != nil {
		return err
	}
	svc := ops.New(ops.Options{Config: cfg, Backends: backend.Kinds{}, Now: c.now, Env: c.contextEnv(co)})
	defer svc.Close()
	res, err := svc.Init("")
	if err != nil {
		return err
	}
	kept := map[bool]string{true: "created", false: "kept existing"}
	fmt.Fprintf(c.stdout, "identity: %s %s\n", kept[res.IdentityCreated], res.IdentityPath)
	fmt.Fprintf(c.stdout, "public key: %s\n", res.Recipient)
	fmt.Fprintf(c.stdout, "vault for env %s: %s %s\n", res.Env, kept[res.VaultCreated], res.VaultPath)
	return nil
}

func runVersion(_ context.Context, c *cli, args []string) error {
	if helpAsked(args) {
		fmt.Fprintln(c.stdout, "usage: arca version (or arca --version)")
		return flag.ErrHelp
	}
	if len(args) != 0 {
		return usagef("usage: arca version")
	}
	fmt.Fprintf(c.stdout, "arca %s (protocol %s)\n", manifest.Version, manifest.Protocol)
	return nil
}
