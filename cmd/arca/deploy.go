package main

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/config"
	"github.com/arca-secrets/arca/ops/deploy"
)

// deployFlags are deploy's own flags.
type deployFlags struct {
	template, out, mode *string
	check, dryRun, json *bool
}

func deployCommand() *command {
	var df deployFlags
	return &command{
		name: "deploy", args: "[NAME...]", summary: "render templates with secrets into the files programs read",
		text:     "Render templates with secrets into the files programs read, as the config's [[deploy]] targets say (or one --template/--out): every secret is read first, a target is written atomically and only when it changed. --check exits 1 when a target would change.",
		examples: []string{"arca deploy", "arca deploy --check web", "arca deploy --check --json # for CI", "arca deploy --template app.tmpl --out /etc/app.conf --mode 0600"},
		exits:    vaultExits,
		flags: func(fs *flag.FlagSet) {
			df.template = fs.String("template", "", "render the template `FILE` alone (with --out), not the config's targets")
			df.out = fs.String("out", "", "where --template goes: a file `PATH`, or - for stdout")
			df.mode = fs.String("mode", "0600", "the `MODE` of the --out file, in octal")
			df.check = fs.Bool("check", false, "render and compare, write nothing; exit 1 when a target would change")
			df.dryRun = fs.Bool("dry-run", false, "list the refs each target needs; read and write nothing")
			df.json = fs.Bool("json", false, "print each target's outcome as JSON (no target may go to stdout)")
		},
		run: func(ctx context.Context, c *cli, fs *verbFlags, args []string) error {
			return runDeploy(ctx, c, fs, args, df)
		},
	}
}

// runDeploy is `arca deploy [NAME...]` (the config's [[deploy]] targets,
// all of them by default) and `arca deploy --template FILE --out PATH`
// (one template): secrets rendered into the files programs read.
func runDeploy(ctx context.Context, c *cli, fs *verbFlags, args []string, df deployFlags) error {
	names, err := c.parse(fs, args, anyArgs)
	if err != nil {
		return err
	}
	svc, cfg, done, err := c.serviceConfig(fs.co)
	if err != nil {
		return err
	}
	defer done()
	targets, err := deployTargets(cfg, df, names)
	if err != nil {
		return err
	}
	if *df.json {
		for _, t := range targets {
			if t.Out == deploy.Stdout {
				what := "--out -"
				if t.Name != "" {
					what = "target " + t.Name + " (out \"-\")"
				}
				return usagef("--json prints the report on stdout: %s cannot go there too", what)
			}
		}
	}
	res, err := deploy.Run(ctx, svc, targets, deploy.Options{Check: *df.check, DryRun: *df.dryRun, Stdout: c.raw.stdout})
	if err != nil {
		return err
	}
	if *df.json {
		if err := c.printJSON(deploy.NewReport(res)); err != nil {
			return err
		}
	} else {
		c.printDeploy(res)
	}
	return deployChanges(res)
}

// deployTargets are the targets asked for: the one --template names, or
// the config's, those named in names when there are any.
func deployTargets(cfg *ops.Config, df deployFlags, names []string) ([]deploy.Target, error) {
	if *df.template != "" || *df.out != "" {
		return oneTarget(df, names)
	}
	all, err := cfg.DeployTargets()
	if err != nil {
		return nil, err
	}
	if len(all) == 0 {
		return nil, usagef("no [[deploy]] targets are configured: add one to the config, or render one template with --template FILE --out PATH")
	}
	var known []string
	for _, d := range all {
		known = append(known, d.Name)
	}
	for _, n := range names {
		if !slices.Contains(known, n) {
			return nil, usagef("no deploy target %q (configured: %s)", n, strings.Join(known, ", "))
		}
	}
	var out []deploy.Target
	for _, d := range all {
		if len(names) == 0 || slices.Contains(names, d.Name) {
			out = append(out, deploy.Target{Name: d.Name, Template: d.Template, Out: d.Out, Mode: d.FileMode(), Env: d.Env})
		}
	}
	return out, nil
}

// oneTarget is the target of --template and --out.
func oneTarget(df deployFlags, names []string) ([]deploy.Target, error) {
	switch {
	case len(names) > 0:
		return nil, usagef("--template renders one template: it takes no target NAME")
	case *df.template == "" || *df.out == "":
		return nil, usagef("--template FILE and --out PATH go together")
	case *df.check && *df.out == deploy.Stdout:
		return nil, usagef("--check compares a target with its file: --out - has none")
	}
	d := config.Deploy{Mode: *df.mode}
	if err := d.CheckMode(); err != nil {
		return nil, usagef("--mode: %v", err)
	}
	return []deploy.Target{{Template: *df.template, Out: *df.out, Mode: d.FileMode()}}, nil
}

// printDeploy prints one line per target, never a value: on stdout, or on
// stderr when a target itself went to stdout.
func (c *cli) printDeploy(res []deploy.Result) {
	w := c.stdout
	for _, r := range res {
		if r.Target.Out == deploy.Stdout {
			w = c.stderr
		}
	}
	for _, r := range res {
		name := r.Target.Out
		if r.Target.Name != "" {
			name = r.Target.Name + " (" + r.Target.Out + ")"
		}
		switch r.Status {
		case deploy.Listed:
			fmt.Fprintf(w, "%s: %s\n", name, strings.Join(r.Refs, " "))
		case deploy.Printed:
		default:
			fmt.Fprintf(w, "%s %s\n", r.Status, name)
		}
	}
}

// deployChanges is exit 1, reported already, when a target would change
// (--check).
func deployChanges(res []deploy.Result) error {
	changes := 0
	for _, r := range res {
		if r.Status == deploy.WouldChange {
			changes++
		}
	}
	if changes > 0 {
		return reported{opErrorf("%d targets would change", changes)}
	}
	return nil
}
