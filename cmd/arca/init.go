package main

import (
	"fmt"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/backend"
)

func runInit(c *cli, args []string) int {
	var co common
	if _, st := c.parse(c.flags("init", "", &co), args, 0); st >= 0 {
		return st
	}
	cfg, err := ops.LoadConfig(co.config, c.getenv)
	if err != nil {
		return c.fail(err)
	}
	svc := ops.New(ops.Options{Config: cfg, Backends: backend.Kinds{}, Now: c.now, Env: c.contextEnv(co)})
	defer svc.Close()
	res, err := svc.Init("")
	if err != nil {
		return c.fail(err)
	}
	kept := map[bool]string{true: "created", false: "kept existing"}
	fmt.Fprintf(c.stdout, "identity: %s %s\n", kept[res.IdentityCreated], res.IdentityPath)
	fmt.Fprintf(c.stdout, "public key: %s\n", res.Recipient)
	fmt.Fprintf(c.stdout, "vault for env %s: %s %s\n", res.Env, kept[res.VaultCreated], res.VaultPath)
	return manifest.ExitOK
}

func runVersion(c *cli, args []string) int {
	if len(args) != 0 {
		return c.failf(manifest.ExitUsage, "usage: arca version")
	}
	fmt.Fprintf(c.stdout, "arca %s (protocol %s)\n", manifest.Version, manifest.Protocol)
	return manifest.ExitOK
}
