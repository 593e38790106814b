package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"

	"github.com/arca-secrets/arca/ops"
)

func getCommand() *command {
	var (
		asJSON  *bool
		version versionFlag
	)
	return &command{
		name: "get", args: "REF", summary: "print a secret's value",
		text: "Print the value of the secret at REF, byte for byte: a newline is added only when stdout is a terminal. With --version, the value of that kept version (see arca history). With --json, the value and its metadata as serve's get result.",
		examples: []string{"arca get arca://app/db", "arca get arca://prod/app/db > db.txt # the env pinned in the ref", "arca get --json arca://app/db | jq -r .version",
			"arca get --version 2 arca://app/db # an earlier value"},
		exits: vaultExits,
		flags: withJSON(&asJSON, "print the value with its metadata as JSON (serve's result.get)", func(fs *flag.FlagSet) {
			fs.Var(&version, "version", "print kept version `N`, not the current one")
		}),
		run: func(ctx context.Context, c *cli, fs *verbFlags, args []string) error {
			return runGet(ctx, c, fs, args, asJSON, &version)
		},
	}
}

func runGet(ctx context.Context, c *cli, fs *verbFlags, args []string, asJSON *bool, version *versionFlag) error {
	return c.vaultVerb(ctx, fs, args, 1, func(ctx context.Context, svc *ops.Service, pos []string) error {
		req := ops.Request{Ref: pos[0]}
		if version.set {
			if version.v == 0 {
				return usagef("get: --version must be 1 or more")
			}
			req.Version = version.v
		}
		res, err := svc.Get(ctx, req)
		if err != nil {
			return err
		}
		var out []byte
		if *asJSON {
			out = indentedJSON(res.AppendJSON(nil))
		} else {
			out = res.Value.Reveal()
			if c.stdoutTTY {
				out = append(out[:len(out):len(out)], '\n')
			}
		}
		if _, err := c.raw.stdout.Write(out); err != nil {
			return opErrorf("write value to stdout: %v", err)
		}
		return nil
	})
}

// indentedJSON indents compact, as printJSON does, with a final newline.
// compact is arca's own encoding, so it is valid.
func indentedJSON(compact []byte) []byte {
	var buf bytes.Buffer
	if json.Indent(&buf, compact, "", "  ") != nil {
		return append(compact, '\n')
	}
	buf.WriteByte('\n')
	return buf.Bytes()
}
