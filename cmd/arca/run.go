package main

import (
	"context"
	"strings"

	"github.com/arca-secrets/arca/ops/inject"
)

// secretFlags collects repeated --secret NAME=REF flags. A flag without "="
// is remembered, not refused in Set: the flag package would quote the whole
// argument in its message, and a value pasted there by mistake must not be
// echoed.
type secretFlags struct {
	list      []inject.Injection
	malformed bool
}

func (s *secretFlags) String() string { return "" }

func (s *secretFlags) Set(v string) error {
	name, ref, ok := strings.Cut(v, "=")
	if !ok {
		s.malformed = true
		return nil
	}
	s.list = append(s.list, inject.Injection{Name: name, Ref: ref})
	return nil
}

// runRun runs a command with the allowlisted environment and the secrets it
// asks for. Once the child started, arca's exit status is the child's:
// its exit code, or 128+N when signal N killed it. Before that arca's own
// statuses apply: a secret that does not resolve, or a command that cannot
// be started, stops the run with a one-line message.
//
// Where bytes go: without --mask the child has arca's stdin, stdout and
// stderr themselves. With --mask its stdout and stderr are pipes that arca
// copies to its own stdout and stderr through redactors.
func runRun(ctx context.Context, c *cli, args []string) error {
	var co common
	var secrets secretFlags
	fs := c.flags("run", "[--] CMD [ARGS...]", &co)
	fs.Var(&secrets, "secret", "set the child's variable NAME to the secret at REF, once per `NAME=REF`")
	mask := fs.Bool("mask", false, "pass the child's stdout and stderr through arca, every secret value replaced by <redacted:NAME>")
	argv, err := c.parseCommand(fs, args, &secrets)
	if err != nil {
		return err
	}
	// The command is found before any secret is read: nothing is
	// materialized for a run that cannot start.
	cmd, err := inject.Command(argv)
	if err != nil {
		return err
	}
	svc, done, err := c.service(co)
	if err != nil {
		return err
	}
	vars, err := inject.Materialize(ctx, svc, inject.Merge(c.environ(), secrets.list))
	// Vault and audit file are closed before the child starts: it may be
	// arca itself, and it holds nothing of arca's while it runs.
	done()
	if err != nil {
		return err
	}
	st, err := inject.Run(cmd, inject.Child{
		Environ: c.environ(), Secrets: vars, Mask: *mask,
		Stdin: c.stdin, Stdout: c.stdout, Stderr: c.stderr,
	})
	if err != nil {
		return err
	}
	return status(st)
}

// parseCommand parses the flags of run and what follows them: the command,
// at least one argument, taken as is (a "--" ends the flags).
func (c *cli) parseCommand(fs *verbFlags, args []string, secrets *secretFlags) ([]string, error) {
	if err := c.parseFlags(fs, args); err != nil {
		return nil, err
	}
	switch {
	case secrets.malformed:
		return nil, usagef("--secret wants NAME=REF, e.g. --secret DB_PASSWORD=arca://app/db (%s)", fs.usage())
	case fs.NArg() == 0:
		return nil, usagef("no command to run (%s)", fs.usage())
	}
	return fs.Args(), nil
}
