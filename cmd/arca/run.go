package main

import (
	"context"
	"flag"

	"github.com/arca-secrets/arca/internal/passenv"
	"github.com/arca-secrets/arca/ops/inject"
)

func runCommand() *command {
	var in injectFlags
	var mask, noMask *bool
	return &command{
		name: "run", args: "[--] CMD [ARGS...]", summary: "run a command with the allowlisted environment and the secrets it asks for",
		text:     "Run CMD with the allowlisted environment and the secrets it asks for: --secret NAME=REF as variables, --file NAME=REF as 0600 files, --env-file lines, NAME=arca://… of arca's environment resolved, and the variables of arca's environment that --pass (or the config's [run] pass) names, as they are. Its stdout and stderr pass through arca, every form of a value (raw, JSON, URL, hex, base64, …) replaced by <redacted:NAME>, unless --no-mask; a value under 4 bytes cannot be, and is warned about. arca exits with CMD's status.",
		examples: []string{"arca run --secret DB_PASSWORD=arca://app/db -- ./server", "arca run --env-file app.env --no-mask -- make deploy", "arca run --pass NODE_ENV --pass 'GITHUB_*' -- npm test"},
		exits:    "CMD's status once it runs; before: 1 operation error (or CMD not found), 2 usage or bad request, 3 denied, 4 not found",
		flags: func(fs *flag.FlagSet) {
			in.register(fs, "give the command", true)
			mask = fs.Bool("mask", false, "pass the command's stdout and stderr through arca, every secret value replaced by <redacted:NAME> (the default)")
			noMask = fs.Bool("no-mask", false, "hand the command arca's own stdout and stderr (its terminal), values and all")
		},
		run: func(ctx context.Context, c *cli, fs *verbFlags, args []string) error {
			return runRun(ctx, c, fs, args, &in, mask, noMask)
		},
	}
}

// runRun runs a command with the allowlisted environment and the secrets it
// asks for (--secret, --file, --env-file, refs in arca's environment).
// Once the child started, arca's exit status is the child's: its exit
// code, or 128+N when signal N killed it. Before that arca's own statuses
// apply: an env file that does not parse, a secret that does not resolve,
// or a command that cannot be started, stops the run with a one-line
// message.
//
// Where bytes go: the child has arca's stdin. Its stdout and stderr are
// pipes that arca copies to its own stdout and stderr through scrub
// streams of the values injected, unless --no-mask (or no value to scrub):
// then they are arca's own. A --file value goes to a file only the user
// can read, removed when the child exited. --mask, the default, may be
// given; with --no-mask it is a usage error.
func runRun(ctx context.Context, c *cli, fs *verbFlags, args []string, in *injectFlags, mask, noMask *bool) error {
	argv, err := c.parseCommand(fs, args, in)
	if err != nil {
		return err
	}
	if *mask && *noMask {
		return usagef("--mask and --no-mask contradict each other (%s)", fs.usage())
	}
	// The command is found before any secret is read: nothing is
	// materialized for a run that cannot start.
	cmd, err := inject.Command(argv)
	if err != nil {
		return err
	}
	injections, err := in.injections(c.environ())
	if err != nil {
		return err
	}
	vars, passed, err := c.materialize(ctx, fs.co, in, injections)
	if err != nil {
		return err
	}
	st, err := inject.Run(cmd, inject.Child{
		Environ: c.environ(), Secrets: vars, Passed: passed, NoMask: *noMask,
		Stdin: c.stdin, Stdout: c.raw.stdout, Stderr: c.raw.stderr,
		Getenv: c.getenv, Warnf: c.warnf,
	})
	if err != nil {
		return err
	}
	return status(st)
}

// parseCommand parses the flags of run and what follows them: the command,
// at least one argument, taken as is (a "--" ends the flags).
func (c *cli) parseCommand(fs *verbFlags, args []string, in *injectFlags) ([]string, error) {
	if err := c.parseFlags(fs, args); err != nil {
		return nil, err
	}
	if err := in.check(fs); err != nil {
		return nil, err
	}
	if fs.NArg() == 0 {
		return nil, usagef("no command to run (%s)", fs.usage())
	}
	return fs.Args(), nil
}

// materialize resolves injections through a service of its own, once the
// variables to pass (the config's [run] pass and --pass) are picked and
// none of them is also injected. Vault and audit file are closed again
// before it returns, before the child starts: the child may be arca
// itself, and it holds nothing of arca's while it runs.
func (c *cli) materialize(ctx context.Context, co common, in *injectFlags, injections []inject.Injection) ([]inject.Materialized, []passenv.Var, error) {
	svc, cfg, done, err := c.serviceConfig(co)
	if err != nil {
		return nil, nil, err
	}
	defer done()
	passed, err := in.passed(cfg, c.environ(), injections)
	if err != nil {
		return nil, nil, err
	}
	vars, err := inject.Materialize(ctx, svc, injections)
	return vars, passed, err
}
