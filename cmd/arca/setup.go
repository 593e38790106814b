package main

import (
	"errors"
	"flag"
	"io"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
)

// common are the flags every vault verb takes.
type common struct {
	env    string
	config string
}

// flags returns a FlagSet for verb with the common flags bound to co.
func (c *cli) flags(verb, args string, co *common) *flag.FlagSet {
	fs := flag.NewFlagSet(verb, flag.ContinueOnError)
	fs.SetOutput(c.stderr)
	fs.StringVar(&co.env, "env", "", "the env to use (default: $ARCA_ENV, else the config's default_env)")
	fs.StringVar(&co.config, "config", "", "the config file (default: $ARCA_CONFIG, ./arca.toml, ~/.config/arca/arca.toml)")
	fs.Usage = func() {
		c.failf(manifest.ExitUsage, "usage: arca %s [--env ENV] [--config FILE] %s", verb, args)
		fs.PrintDefaults()
	}
	return fs
}

// parse parses args and checks the number of positional arguments.
func (c *cli) parse(fs *flag.FlagSet, args []string, want int) ([]string, int) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, manifest.ExitOK
		}
		return nil, manifest.ExitUsage
	}
	if fs.NArg() != want {
		fs.Usage()
		return nil, manifest.ExitUsage
	}
	return fs.Args(), -1
}

// service loads the config and opens the audit file. The caller runs done.
func (c *cli) service(co common) (svc *ops.Service, done func(), status int) {
	cfg, err := ops.LoadConfig(co.config, c.getenv)
	if err != nil {
		return nil, nil, c.fail(err)
	}
	path, err := cfg.AuditFile()
	if err != nil {
		return nil, nil, c.fail(err)
	}
	f, err := audit.OpenFile(path)
	if err != nil {
		return nil, nil, c.fail(ops.Errorf(manifest.OpError, "%v (nothing is done unaudited)", err))
	}
	env := co.env
	if env == "" {
		env = c.getenv("ARCA_ENV")
	}
	svc = ops.New(ops.Options{Config: cfg, Audit: audit.NewWriter(f, audit.SourceCLI, c.now), Now: c.now, Env: env})
	return svc, func() { svc.Close(); f.Close() }, -1
}

// fail prints err and returns the exit status its code maps to.
func (c *cli) fail(err error) int {
	return c.failf(manifest.ExitStatus(ops.CodeOf(err)), "%s", err.Error())
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
