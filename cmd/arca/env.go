package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/inject"
)

// formatFlag is --format: one of inject.EnvFormats.
type formatFlag string

func (f *formatFlag) String() string { return string(*f) }

func (f *formatFlag) Set(v string) error {
	if !slices.Contains(inject.EnvFormats(), v) {
		return fmt.Errorf("want one of %s", strings.Join(inject.EnvFormats(), ", "))
	}
	*f = formatFlag(v)
	return nil
}

func envCommand() *command {
	var in injectFlags
	format := formatFlag(inject.EnvFormats()[0])
	return &command{
		name: "env", summary: "print the secrets run would hand a command, as sh, dotenv or JSON assignments",
		text:     "Print the variables run would hand a command (but the allowlisted ones), passed ones included, as assignments for sh (eval), dotenv or JSON.",
		examples: []string{"eval \"$(arca env --secret DB_PASSWORD=arca://app/db)\""},
		exits:    vaultExits,
		flags: func(fs *flag.FlagSet) {
			in.register(fs, "print", false)
			fs.Var(&format, "format", "print assignments as `sh|dotenv|json`")
		},
		run: func(ctx context.Context, c *cli, fs *verbFlags, args []string) error {
			return runEnv(ctx, c, fs, args, &in, &format)
		},
	}
}

// runEnv prints the variables arca run would add to a child's environment
// (the allowlisted ones excepted) as assignments on stdout, the literals
// of env files and the passed variables (--pass, [run] pass) among them. Nothing is printed unless every secret resolved
// and was audited. It takes no --file: it prints assignments, and a file
// it wrote would be gone when it exits.
func runEnv(ctx context.Context, c *cli, fs *verbFlags, args []string, in *injectFlags, format *formatFlag) error {
	return c.vaultVerb(ctx, fs, args, 0, func(ctx context.Context, svc *ops.Service, _ []string) error {
		if err := in.check(fs); err != nil {
			return err
		}
		injections, err := in.injections(c.environ())
		if err != nil {
			return err
		}
		passed, err := in.passed(svc.Config(), c.environ(), injections)
		if err != nil {
			return err
		}
		vars, err := inject.Materialize(ctx, svc, injections)
		if err != nil {
			return err
		}
		var out bytes.Buffer
		if err := inject.FormatEnv(&out, string(*format), inject.WithPassed(vars, passed)); err != nil {
			return err
		}
		if _, err := c.raw.stdout.Write(out.Bytes()); err != nil {
			return opErrorf("write assignments to stdout: %v", err)
		}
		return nil
	})
}
