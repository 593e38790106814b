package main

import (
	"fmt"

	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/vault"
)

func runPut(c *cli, args []string) int {
	var co common
	pos, st := c.parse(c.flags("put", "REF < value", &co), args, 1)
	if st >= 0 {
		return st
	}
	val, err := c.readValue("value for " + pos[0] + ": ")
	if err != nil {
		return c.fail(err)
	}
	svc, done, st := c.service(co)
	if st >= 0 {
		return st
	}
	defer done()
	res, err := svc.Put(c.ctx, ops.Request{Ref: pos[0], Value: vault.NewSecret(val)})
	if err != nil {
		return c.fail(err)
	}
	what := "updated"
	if res.Created {
		what = "created"
	}
	fmt.Fprintf(c.stdout, "%s %s version %d in env %s\n", res.Ref, what, res.Version, res.Env)
	return 0
}

func runRotate(c *cli, args []string) int {
	var co common
	pos, st := c.parse(c.flags("rotate", "REF < value", &co), args, 1)
	if st >= 0 {
		return st
	}
	val, err := c.readValue("new value for " + pos[0] + ": ")
	if err != nil {
		return c.fail(err)
	}
	svc, done, st := c.service(co)
	if st >= 0 {
		return st
	}
	defer done()
	res, err := svc.Rotate(c.ctx, ops.Request{Ref: pos[0], Value: vault.NewSecret(val)})
	if err != nil {
		return c.fail(err)
	}
	fmt.Fprintf(c.stdout, "%s rotated to version %d in env %s\n", res.Ref, res.Version, res.Env)
	return 0
}

func runRm(c *cli, args []string) int {
	var co common
	pos, st := c.parse(c.flags("rm", "REF", &co), args, 1)
	if st >= 0 {
		return st
	}
	svc, done, st := c.service(co)
	if st >= 0 {
		return st
	}
	defer done()
	res, err := svc.Rm(c.ctx, ops.Request{Ref: pos[0]})
	if err != nil {
		return c.fail(err)
	}
	fmt.Fprintf(c.stdout, "%s removed from env %s (was version %d)\n", res.Ref, res.Env, res.Version)
	return 0
}
