package main

import (
	"context"
	"fmt"
)

// runIdentity is `arca identity [--json]`: the public key of the identity
// the env's vault opens with (what a teammate adds with vault recipients
// add), and the identity file's path.
func runIdentity(ctx context.Context, c *cli, args []string) error {
	var co common
	fs := c.flags("identity", "", &co)
	asJSON := fs.Bool("json", false, "print the identity's path and public key as JSON")
	if _, err := c.parse(fs, args, 0); err != nil {
		return err
	}
	svc, done, err := c.unaudited(co)
	if err != nil {
		return err
	}
	defer done()
	res, err := svc.Identity("")
	if err != nil {
		return err
	}
	if *asJSON {
		return c.printJSON(res)
	}
	fmt.Fprintln(c.stdout, res.PublicKey)
	return nil
}
