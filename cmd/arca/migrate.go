package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/bulk"
	"github.com/arca-secrets/arca/ops/ref"
	"github.com/arca-secrets/arca/ops/secretfile"
)

// migrateFlags are migrate's own flags.
type migrateFlags struct {
	from, ns, identity      *string
	dryRun, overwrite, json *bool
}

func migrateCommand() *command {
	var mf migrateFlags
	return &command{
		name: "migrate", args: "[FILE]", summary: "bring secrets in from dotenv, JSON, YAML, vault kv or arenzana/arca files",
		text: "Bring secrets in from another tool's file (or stdin) as one batch: dotenv, JSON, YAML or sops output, Vault kv, arenzana/arca. Records that exist are skipped unless --overwrite; --dry-run writes nothing.",
		examples: []string{"arca migrate --from dotenv --ns app .env", "vault kv get -format=json secret/app | arca migrate --from vault-kv --ns app",
			"arca migrate --from dotenv --ns app --dry-run .env"},
		exits: vaultExits,
		flags: func(fs *flag.FlagSet) {
			mf.from = fs.String("from", "", "the input's `FORMAT`: "+strings.Join(secretfile.Formats(), ", "))
			mf.ns = fs.String("ns", "", "the `NS` (namespace) of a flat input's names; a two-level input names its own")
			mf.identity = fs.String("identity", "", "the age identity `FILE` that opens an arenzana store")
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
		c.bulkMemory()
		items, source, err := c.readMigration(mf, pos)
		if err != nil {
			return err
		}
		res, err := bulk.Import(ctx, svc, bulk.Request{Source: source, Items: items, Overwrite: *mf.overwrite, DryRun: *mf.dryRun})
		if err != nil {
			return err
		}
		return c.printBulk(res, *mf.json)
	})
}

// readMigration reads and parses the input, mapping its names to refs; it
// returns them with the input's name.
func (c *cli) readMigration(mf migrateFlags, pos []string) (*bulk.Packed, string, error) {
	if len(pos) > 1 {
		return nil, "", usagef("migrate reads one FILE (or stdin), not %d", len(pos))
	}
	if !slices.Contains(secretfile.Formats(), *mf.from) {
		return nil, "", usagef("--from must be one of %s", strings.Join(secretfile.Formats(), ", "))
	}
	if *mf.ns != "" && !ref.ValidSegment(*mf.ns) {
		return nil, "", usagef("--ns %q %s", *mf.ns, ref.SegmentProblem(*mf.ns))
	}
	var o secretfile.Options
	if *mf.identity != "" {
		ids, err := c.identityKeys().Load(*mf.identity)
		if err != nil {
			return nil, "", usagef("--identity: %v", err)
		}
		o.Identities = ids
	}
	r, name, done, err := c.input(pos)
	if err != nil {
		return nil, "", err
	}
	defer done()
	data, err := secretfile.ReadInput(r)
	if err != nil {
		return nil, "", usagef("%s: %v; nothing was written", name, err)
	}
	items, shape, err := bulk.Pack(data, *mf.from, o, *mf.ns)
	if err != nil {
		return nil, "", usagef("%s: %v; nothing was written", name, err)
	}
	switch {
	case shape == secretfile.Flat && *mf.ns == "":
		return nil, "", usagef("%s holds names without a namespace: give one with --ns NS", name)
	case shape == secretfile.Nested && *mf.ns != "":
		return nil, "", usagef("%s names its namespaces (its outer keys): --ns is only for flat inputs", name)
	}
	return items, name, nil
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
