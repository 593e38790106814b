package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
)

// common are the flags every vault verb takes.
type common struct {
	env    string
	config string
}

// verbFlags is a command's FlagSet: the common flags, parsed into co
// (unless the command is bare), and its own.
type verbFlags struct {
	*flag.FlagSet
	cmd *command
	co  common
}

// usage is the command's one-line synopsis: its flags, then its arguments.
func (fs *verbFlags) usage() string {
	var b strings.Builder
	b.WriteString("usage: arca " + fs.Name())
	fs.VisitAll(func(f *flag.Flag) {
		if name, _ := flag.UnquoteUsage(f); name != "" {
			fmt.Fprintf(&b, " [--%s %s]", f.Name, name)
		} else {
			fmt.Fprintf(&b, " [--%s]", f.Name)
		}
	})
	if fs.cmd.args != "" {
		b.WriteString(" " + fs.cmd.args)
	}
	return b.String()
}

// anyArgs is the want of a verb that takes any number of positional
// arguments; optionalArg of one that takes none or one.
const (
	anyArgs     = -1
	optionalArg = -2
)

// parse parses args and checks the number of positional arguments against
// want (anyArgs: any number). Flags may come before, between or after the
// positional arguments; a "--" ends the flags, and what follows it is
// positional even when it starts with a dash.
func (c *cli) parse(fs *verbFlags, args []string, want int) ([]string, error) {
	var rest []string
	if i := slices.Index(args, "--"); i >= 0 {
		args, rest = args[:i], args[i+1:]
	}
	var pos []string
	for {
		if err := c.parseFlags(fs, args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			break
		}
		pos, args = append(pos, fs.Arg(0)), fs.Args()[1:]
	}
	pos = append(pos, rest...)
	if want == optionalArg && len(pos) > 1 || want >= 0 && len(pos) != want {
		return nil, usagef("%s", fs.usage())
	}
	return pos, nil
}

// parseFlags parses the flags in args: -h prints the verb's usage on
// stdout and returns flag.ErrHelp (exit 0), a bad flag is a one-line usage
// error.
func (c *cli) parseFlags(fs *verbFlags, args []string) error {
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		c.printHelp(c.stdout, fs)
		return flag.ErrHelp
	case err != nil:
		return usagef("%v%s (%s)", err, suggestFlag(err, fs.FlagSet), fs.usage())
	}
	return nil
}

// vaultVerb runs a verb that uses the vault: its flags, want positional
// arguments, then fn with the service.
func (c *cli) vaultVerb(ctx context.Context, fs *verbFlags, args []string, want int, fn func(ctx context.Context, svc *ops.Service, pos []string) error) error {
	pos, err := c.parse(fs, args, want)
	if err != nil {
		return err
	}
	svc, done, err := c.service(fs.co)
	if err != nil {
		return err
	}
	defer done()
	return fn(ctx, svc, pos)
}

// contextEnv is the env of the process context: --env, else $ARCA_ENV.
func (c *cli) contextEnv(co common) string {
	if co.env != "" {
		return co.env
	}
	return c.getenv("ARCA_ENV")
}

// service loads the config and opens the audit file. The caller runs done.
func (c *cli) service(co common) (svc *ops.Service, done func(), err error) {
	svc, _, done, err = c.serviceConfig(co)
	return svc, done, err
}

// serviceConfig is service, and the config it loaded.
func (c *cli) serviceConfig(co common) (svc *ops.Service, cfg *ops.Config, done func(), err error) {
	return c.serviceConfigAs(co, audit.SourceCLI)
}

// serviceConfigAs is serviceConfig whose events say source: arca ui's
// are the page's (audit.SourceUI), in the same audit file and chain.
func (c *cli) serviceConfigAs(co common, source string) (svc *ops.Service, cfg *ops.Config, done func(), err error) {
	cfg, err = ops.LoadConfig(co.config, c.getenv)
	if err != nil {
		return nil, nil, nil, err
	}
	path, err := cfg.AuditFile()
	if err != nil {
		return nil, nil, nil, err
	}
	f, err := audit.OpenFile(path)
	if err != nil {
		return nil, nil, nil, opErrorf("%v (nothing is done unaudited)", err)
	}
	aw := audit.NewWriter(f, source, c.now)
	aw.SetWho(c.who) // every event of the CLI says who acted where
	svc = ops.New(ops.Options{Config: cfg, Backends: c.kinds(), Keys: c.identityKeys(), Audit: aw, Now: c.now, Env: c.contextEnv(co)})
	return svc, cfg, func() { svc.Close(); f.Close() }, nil
}

// readValue reads a secret value from stdin: at most manifest.MaxValue bytes,
// taken exactly as given. From a terminal it reads one line without echo.
func (c *cli) readValue(prompt string) ([]byte, error) {
	if c.stdinTTY {
		return readHidden(c.stderr, prompt)
	}
	b, err := io.ReadAll(io.LimitReader(c.stdin, manifest.MaxValue+1))
	if err != nil {
		return nil, ops.Errorf(manifest.OpError, "read value from stdin: %v", err)
	}
	if len(b) > manifest.MaxValue {
		return nil, ops.Errorf(manifest.BadRequest, "value on stdin is larger than %d bytes", manifest.MaxValue)
	}
	return b, nil
}
