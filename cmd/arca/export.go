package main

import (
	"bufio"
	"context"
	"flag"
	"strings"

	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/bulk"
	"github.com/arca-secrets/arca/ops/secretfile"
)

func exportCommand() *command {
	var ef exportFlags
	return &command{
		name: "export", summary: "print an env's secrets as JSON or dotenv, for another tool",
		text:     "Print an env's secrets (or one namespace's) as JSON or dotenv, for another tool. It refuses a terminal unless --terminal.",
		examples: []string{"arca export --format dotenv --ns app > app.env"},
		exits:    vaultExits,
		flags: func(fs *flag.FlagSet) {
			ef.ns = fs.String("ns", "", "export only namespace `NS` (dotenv needs it: its names have no namespace)")
			ef.format = fs.String("format", "json", "the output `FORMAT`: json or dotenv")
			ef.terminal = fs.Bool("terminal", false, "print the values even when stdout is a terminal")
		},
		run: func(ctx context.Context, c *cli, fs *verbFlags, args []string) error {
			return runExport(ctx, c, fs, args, ef)
		},
	}
}

// exportFlags are export's own flags.
type exportFlags struct {
	ns, format *string
	terminal   *bool
}

// runExport is `arca export [--ns NS] [--format dotenv|json] [--terminal]`:
// an env's secrets on stdout, for leaving arca or feeding another tool.
func runExport(ctx context.Context, c *cli, fs *verbFlags, args []string, ef exportFlags) error {
	ns, format, terminal := ef.ns, ef.format, ef.terminal
	return c.vaultVerb(ctx, fs, args, 0, func(ctx context.Context, svc *ops.Service, _ []string) error {
		c.bulkMemory()
		switch {
		case *format != "json" && *format != "dotenv":
			return usagef("--format must be json or dotenv")
		case *format == "dotenv" && *ns == "":
			return usagef("dotenv has no namespaces: name the one to export with --ns NS")
		case c.stdoutTTY && !*terminal:
			return usagef("stdout is a terminal and export prints every value: redirect it to a file or a program, or pass --terminal")
		}
		res, err := bulk.Export(ctx, svc, "", *ns)
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
		w := bufio.NewWriter(c.raw.stdout)
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
