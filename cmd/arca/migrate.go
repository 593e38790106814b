package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/arca-secrets/arca/internal/passenv"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/bulk"
	"github.com/arca-secrets/arca/ops/ref"
	"github.com/arca-secrets/arca/ops/secretfile"
)

// migrateFlags are migrate's own flags.
type migrateFlags struct {
	from, ns, nsPrefix, identity               *string
	dryRun, overwrite, json, skipEmpty, expand *bool
}

func migrateCommand() *command {
	var mf migrateFlags
	return &command{
		name: "migrate", args: "[FILE]", summary: "bring secrets in from dotenv, JSON, YAML, vault kv or arenzana/arca files",
		text: "Bring secrets in from another tool's file (or stdin) as one batch: dotenv, JSON, YAML or sops output, Vault kv, arenzana/arca. Records that exist are skipped unless --overwrite; --dry-run writes nothing.",
		examples: []string{"arca migrate --from dotenv --ns app .env", "vault kv get -format=json secret/app | arca migrate --from vault-kv --ns app",
			"arca migrate --from dotenv --ns app --dry-run .env", "arca migrate --from dotenv --ns app --skip-empty --expand .env",
			"sops -d secrets.yaml | arca migrate --from yaml --ns-prefix team-"},
		exits: vaultExits,
		flags: func(fs *flag.FlagSet) {
			mf.from = fs.String("from", "", "the input's `FORMAT`: "+strings.Join(secretfile.Formats(), ", "))
			mf.ns = fs.String("ns", "", "the `NS` (namespace) of a flat input's names; a two-level input names its own")
			mf.nsPrefix = fs.String("ns-prefix", "", "land a two-level input's namespaces as `PREFIX` followed by each outer key (team- lands db as team-db)")
			mf.identity = fs.String("identity", "", "the age identity `FILE` that opens an arenzana store")
			mf.skipEmpty = fs.Bool("skip-empty", false, "leave out the keys whose value is empty, listing their names on stderr (else one refuses the input)")
			mf.expand = fs.Bool("expand", false, "expand $NAME, ${NAME}, ${NAME:-default} and ${NAME-default} in a dotenv's unquoted and double-quoted values, from earlier keys, else the environment")
			mf.dryRun = fs.Bool("dry-run", false, "list what would be created, overwritten or skipped; write nothing")
			mf.overwrite = fs.Bool("overwrite", false, "replace records that exist (else they are skipped)")
			mf.json = fs.Bool("json", false, "print what was done (or would be) as JSON")
		},
		run: func(ctx context.Context, c *cli, fs *verbFlags, args []string) error {
			return runMigrate(ctx, c, fs, args, mf)
		},
	}
}

// runMigrate is `arca migrate --from FORMAT [--ns NS] [--identity FILE]
// [--dry-run] [--overwrite] [FILE]`: secrets from another tool's file (or
// stdin) into the env's vault, as one batch.
func runMigrate(ctx context.Context, c *cli, fs *verbFlags, args []string, mf migrateFlags) error {
	return c.vaultVerb(ctx, fs, args, anyArgs, func(ctx context.Context, svc *ops.Service, pos []string) error {
		// An empty --ns or --ns-prefix is no namespace: refused, never
		// taken as none given.
		var empty error
		fs.Visit(func(f *flag.Flag) {
			if (f.Name == "ns" || f.Name == "ns-prefix") && f.Value.String() == "" && empty == nil {
				empty = usagef("--%s is empty: give a namespace of 1 to 128 letters, digits, \".\", \"_\" or \"-\"", f.Name)
			}
		})
		if empty != nil {
			return empty
		}
		c.bulkMemory()
		items, rep, source, err := c.readMigration(mf, pos)
		if err != nil {
			return err
		}
		res, err := bulk.Import(ctx, svc, bulk.Request{Source: source, Items: items, Overwrite: *mf.overwrite, DryRun: *mf.dryRun})
		if err != nil {
			return err
		}
		if *mf.json {
			out := bulkResultJSON(res)
			out.SkippedEmpty, out.Unexpanded = rep.Empty, rep.Refs
			return c.printJSON(out)
		}
		c.tellMigration(source, rep)
		return c.printBulk(res, false)
	})
}

// readMigration reads and parses the input, mapping its names to refs; it
// returns them with what was left out or stored as written, and the
// input's name.
func (c *cli) readMigration(mf migrateFlags, pos []string) (*bulk.Packed, bulk.PackReport, string, error) {
	var none bulk.PackReport
	if err := checkMigrateFlags(mf, pos); err != nil {
		return nil, none, "", err
	}
	o := secretfile.Options{Expand: *mf.expand, Lookup: c.lookupEnv}
	if *mf.identity != "" {
		ids, err := c.identityKeys().Load(*mf.identity)
		if err != nil {
			return nil, none, "", usagef("--identity: %v", err)
		}
		o.Identities = ids
	}
	r, name, done, err := c.input(pos)
	if err != nil {
		return nil, none, "", err
	}
	defer done()
	data, err := secretfile.ReadInput(r)
	if err != nil {
		return nil, none, "", usagef("%s: %v; nothing was written", name, err)
	}
	items, rep, shape, err := bulk.Pack(data, *mf.from, o, bulk.Landing{NS: *mf.ns, NSPrefix: *mf.nsPrefix, SkipEmpty: *mf.skipEmpty})
	switch {
	case errors.Is(err, secretfile.ErrSopsEncrypted):
		return nil, none, "", usagef("%s", sopsHint(name, *mf.from))
	case err != nil:
		return nil, none, "", usagef("%s: %v; nothing was written", name, err)
	case shape == secretfile.Flat && *mf.nsPrefix != "":
		return nil, none, "", usagef("%s holds names without a namespace: --ns-prefix is for two-level inputs, give --ns NS", name)
	case shape == secretfile.Flat && *mf.ns == "":
		return nil, none, "", usagef("%s holds names without a namespace: give one with --ns NS", name)
	case shape == secretfile.Nested && *mf.ns != "":
		return nil, none, "", usagef("%s names its namespaces (its outer keys): --ns is only for flat inputs (--ns-prefix P lands them as P followed by each)", name)
	}
	return items, rep, name, nil
}

// checkMigrateFlags refuses what the flags alone make wrong.
func checkMigrateFlags(mf migrateFlags, pos []string) error {
	switch {
	case len(pos) > 1:
		return usagef("migrate reads one FILE (or stdin), not %d", len(pos))
	case !slices.Contains(secretfile.Formats(), *mf.from):
		return usagef("--from must be one of %s", strings.Join(secretfile.Formats(), ", "))
	case *mf.ns != "" && !ref.ValidSegment(*mf.ns):
		return usagef("--ns %q %s", *mf.ns, ref.SegmentProblem(*mf.ns))
	case *mf.ns != "" && *mf.nsPrefix != "":
		return usagef("--ns names a flat input's namespace, --ns-prefix a two-level input's: give one")
	case *mf.nsPrefix != "" && !ref.ValidSegment(*mf.nsPrefix):
		return usagef("--ns-prefix %q %s", *mf.nsPrefix, ref.SegmentProblem(*mf.nsPrefix))
	case *mf.expand && *mf.from != "dotenv":
		return usagef("--expand is for --from dotenv: the other formats hold no references to expand")
	}
	return nil
}

// sopsHint is what a sops-encrypted input is told: decrypt it, into a pipe.
func sopsHint(name, from string) string {
	file := name
	if name == "stdin" {
		file = "FILE"
	}
	if from == "dotenv" {
		from = "sops-dotenv"
	}
	return fmt.Sprintf("%s is sops-encrypted: decrypt it first, into a pipe so the plaintext never touches the disk: sops -d %s | arca migrate --from %s …; nothing was written", name, file, from)
}

// maxNamesTold is the most names a line on stderr lists.
const maxNamesTold = 20

// tellMigration tells on stderr what a migration left out and what it
// stored as written: names, never values.
func (c *cli) tellMigration(source string, rep bulk.PackReport) {
	if len(rep.Empty) > 0 {
		c.warnf("%s: skipped %d empty: %s", source, len(rep.Empty), nameList(rep.Empty))
	}
	if len(rep.Refs) > 0 {
		c.warnf("warning: %s: %d %s a $NAME or ${NAME} reference, stored as written: %s (--expand expands them as python-dotenv and Docker Compose do)",
			source, len(rep.Refs), pluralVerb(len(rep.Refs), "value holds", "values hold"), nameList(rep.Refs))
	}
}

// nameList is names joined by ", ", at most maxNamesTold of them.
func nameList(names []string) string {
	if len(names) <= maxNamesTold {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:maxNamesTold], ", ") + fmt.Sprintf(" and %d more", len(names)-maxNamesTold)
}

func pluralVerb(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// input opens the FILE in pos, or stdin when there is none or it is "-".
func (c *cli) input(pos []string) (r io.Reader, name string, done func(), err error) {
	if len(pos) == 0 || pos[0] == "-" {
		return c.stdin, "stdin", func() {}, nil
	}
	f, err := os.Open(pos[0])
	if err != nil {
		return nil, "", nil, usagef("%v", err)
	}
	// A pipe will do (<(sops -d …), a FIFO): the read is bounded anyway.
	if fi, err := f.Stat(); err != nil || fi.IsDir() {
		f.Close()
		return nil, "", nil, usagef("%s is a directory", pos[0])
	}
	return f, pos[0], func() { f.Close() }, nil
}

// bulkGCPercent is the collector's headroom for the bulk verbs (migrate,
// export, vault backup and restore), which hold their records until the
// write is done: most of their heap is those records, and the default
// headroom (100%: as much again as is live) would double their peak. At
// 25% a migration of 10,000 secrets collects a few more times, some 10 ms
// in all.
const bulkGCPercent = 25

// bulkMemory sets the collector's headroom for a bulk verb, unless GOGC
// says otherwise.
func (c *cli) bulkMemory() {
	if c.getenv("GOGC") == "" {
		debug.SetGCPercent(bulkGCPercent)
	}
}

// printBulk prints a bulk write's rows on stdout, one per record, and a
// summary on stderr.
func (c *cli) printBulk(res bulk.Result, asJSON bool) error {
	if asJSON {
		return c.printJSON(bulkResultJSON(res))
	}
	prefix := ""
	if res.DryRun {
		prefix = "would "
	}
	for _, r := range res.Rows {
		switch {
		case r.Action == bulk.ActionSkip && r.Deleted:
			fmt.Fprintf(c.stdout, "%sskip %s%s (deleted in the backup; the vault has the name)\n", prefix, ref.Scheme, r.Ref)
		case r.Action == bulk.ActionSkip:
			fmt.Fprintf(c.stdout, "%sskip %s%s (it exists; --overwrite replaces it)\n", prefix, ref.Scheme, r.Ref)
		case r.Action == bulk.ActionDeleted && res.DryRun:
			fmt.Fprintf(c.stdout, "would restore %s%s as deleted\n", ref.Scheme, r.Ref)
		case r.Action == bulk.ActionDeleted:
			fmt.Fprintf(c.stdout, "restored %s%s as deleted, version %d\n", ref.Scheme, r.Ref, r.Version)
		case res.DryRun:
			fmt.Fprintf(c.stdout, "would %s %s%s\n", r.Action, ref.Scheme, r.Ref)
		default:
			fmt.Fprintf(c.stdout, "%s %s%s version %d\n", past(r.Action), ref.Scheme, r.Ref, r.Version)
		}
	}
	n := func(a bulk.Action) int { return res.Count(a) }
	deleted := ""
	if d := n(bulk.ActionDeleted); d > 0 && res.DryRun {
		deleted = fmt.Sprintf(", restore %d as deleted", d)
	} else if d > 0 {
		deleted = fmt.Sprintf(", %d restored as deleted", d)
	}
	if res.DryRun {
		c.warnf("env %s: would create %d, overwrite %d, skip %d%s; nothing was written (dry run)", res.Env, n(bulk.ActionCreate), n(bulk.ActionOverwrite), n(bulk.ActionSkip), deleted)
	} else {
		c.warnf("env %s: %d created, %d overwritten, %d skipped%s", res.Env, n(bulk.ActionCreate), n(bulk.ActionOverwrite), n(bulk.ActionSkip), deleted)
	}
	return nil
}

func past(action bulk.Action) string {
	if action == bulk.ActionCreate {
		return "created"
	}
	return "overwrote"
}

// lookupEnv finds name in arca's environment for --expand, telling unset
// from empty; a withheld name (ARCA_*, a cloud credential) is unset.
func (c *cli) lookupEnv(name string) (string, bool) {
	if passenv.Withheld(name) {
		return "", false // never arca's settings or a cloud credential: unset
	}
	return processEnv(c.environ()).lookup(name)
}
