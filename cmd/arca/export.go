package main

import (
	"bufio"
	"context"
	"strings"

	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/secretfile"
)

// runExport is `arca export [--ns NS] [--format dotenv|json] [--terminal]`:
// an env's secrets on stdout, for leaving arca or feeding another tool.
func runExport(ctx context.Context, c *cli, args []string) error {
	var ns, format *string
	var terminal *bool
	more := func(fs *verbFlags) {
		ns = fs.String("ns", "", "export only namespace `NS` (dotenv needs it: its names have no namespace)")
		format = fs.String("format", "json", "the output `FORMAT`: json or dotenv")
		terminal = fs.Bool("terminal", false, "print the values even when stdout is a terminal")
	}
	return c.vaultVerb(ctx, args, "export", "", 0, more, func(ctx context.Context, svc *ops.Service, _ []string) error {
		c.bulkMemory()
		switch {
		case *format != "json" && *format != "dotenv":
			return usagef("--format must be json or dotenv")
		case *format == "dotenv" && *ns == "":
			return usagef("dotenv has no namespaces: name the one to export with --ns NS")
		case c.stdoutTTY && !*terminal:
			return usagef("stdout is a terminal and export prints every value: redirect it to a file or a program, or pass --terminal")
		}
		res, err := svc.Export(ctx, "", *ns)
		if err != nil {
			return err
		}
		es := make([]secretfile.Entry, len(res.Records))
		for i, r := range res.Records {
			space, name, _ := strings.Cut(r.Name, "/")
			if *ns != "" {
				space = ""
			}
			es[i] = secretfile.Entry{NS: space, Name: name, Value: r.Value}
		}
		w := bufio.NewWriter(c.stdout)
		if *format == "dotenv" {
			err = secretfile.WriteDotenv(w, es)
		} else if *ns != "" {
			err = secretfile.WriteJSON(w, es, secretfile.Flat)
		} else {
			err = secretfile.WriteJSON(w, es, secretfile.Nested)
		}
		if err == nil {
			err = w.Flush()
		}
		if err != nil {
			return opErrorf("export to stdout: %v", err)
		}
		return nil
	})
}
