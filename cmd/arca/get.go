package main

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/arca-secrets/arca/ops"
)

func runGet(ctx context.Context, c *cli, args []string) error {
	var asJSON *bool
	jsonFlag := func(fs *verbFlags) {
		asJSON = fs.Bool("json", false, "print the value with its metadata as JSON (serve's result.get)")
	}
	return c.vaultVerb(ctx, args, "get", "REF", 1, jsonFlag, func(ctx context.Context, svc *ops.Service, pos []string) error {
		res, err := svc.Get(ctx, ops.Request{Ref: pos[0]})
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
		if _, err := c.stdout.Write(out); err != nil {
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
