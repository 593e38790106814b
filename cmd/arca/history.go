package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
)

// The verbs of versions and history (SPEC §11): history, rollback,
// undelete, destroy and changes, and the flags get, put, rotate, rm and
// list gain (--version, --if-version, --deleted).

// writeExits are the exit statuses of a write that can be conditional.
const writeExits = vaultExits + "; 5 conflict: --if-version named another version"

// versionFlag is an optional version flag: unset until given, then a
// number (--if-version 0 means "no current record").
type versionFlag struct {
	v   uint64
	set bool
}

func (f *versionFlag) String() string {
	if f == nil || !f.set {
		return ""
	}
	return strconv.FormatUint(f.v, 10)
}

func (f *versionFlag) Set(s string) error {
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil || v > manifest.MaxVersion {
		return fmt.Errorf("not a version (an integer from 0 to %d)", uint64(manifest.MaxVersion))
	}
	f.v, f.set = v, true
	return nil
}

// ptr is the version as ops.Request.IfVersion takes it: nil when unset.
func (f *versionFlag) ptr() *uint64 {
	if !f.set {
		return nil
	}
	v := f.v
	return &v
}

// versionsFlag is destroy's --version, given once a version.
type versionsFlag []uint64

func (f *versionsFlag) String() string { return fmt.Sprint([]uint64(*f)) }

func (f *versionsFlag) Set(s string) error {
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil || v == 0 || v > manifest.MaxVersion {
		return fmt.Errorf("not a version (an integer from 1 to %d)", uint64(manifest.MaxVersion))
	}
	*f = append(*f, v)
	return nil
}

// ifVersionFlag registers --if-version on fs.
func ifVersionFlag(fs *flag.FlagSet, f *versionFlag) {
	fs.Var(f, "if-version", "write only if the current version is `N` (0: only if there is none); else exit 5, nothing written")
}

// withJSON registers --json and more flags.
func withJSON(to **bool, usage string, more func(fs *flag.FlagSet)) func(*flag.FlagSet) {
	return func(fs *flag.FlagSet) {
		jsonFlag(to, usage)(fs)
		more(fs)
	}
}

func historyCommand() *command {
	var asJSON *bool
	return &command{
		name: "history", args: "REF", summary: "list a secret's kept versions, never a value",
		text:     "List the versions the vault keeps of REF, newest first: each one's number, its state (current, previous, or deleted while REF is soft-deleted) and when it was written; never a value. In a pipe: one tab-separated line a version.",
		examples: []string{"arca history arca://app/db", "arca history --json arca://app/db | jq '.versions[].version'"},
		exits:    vaultExits,
		flags:    jsonFlag(&asJSON, "print the result as JSON (serve's result.history)"),
		run: func(ctx context.Context, c *cli, fs *verbFlags, args []string) error {
			return c.vaultVerb(ctx, fs, args, 1, func(ctx context.Context, svc *ops.Service, pos []string) error {
				res, err := svc.History(ctx, ops.Request{Ref: pos[0]})
				if err != nil || *asJSON {
					return jsonOr(c, res, err)
				}
				return printHistory(c.stdout, res)
			})
		},
	}
}

// printHistory writes one line a version: its number, state and when it
// was written (RFC 3339 in UTC to the second), tab-separated.
func printHistory(w io.Writer, res ops.HistoryResult) error {
	for _, v := range res.Versions {
		if _, err := fmt.Fprintf(w, "%d\t%s\t%s\n", v.Version, v.State, stamp(v.CreatedAt.Time)); err != nil {
			return opErrorf("write the history: %v", err)
		}
	}
	return nil
}

// jsonOr prints res as JSON unless err.
func jsonOr(c *cli, res any, err error) error {
	if err != nil {
		return err
	}
	return c.printJSON(res)
}

func rollbackCommand() *command {
	var (
		asJSON *bool
		ifv    versionFlag
	)
	return &command{
		name: "rollback", args: "REF VERSION", summary: "write a kept version's value again, as a new version",
		text:     "Make the value of VERSION (see arca history) current again, written as a new version: nothing is lost, and a rollback can itself be rolled back.",
		examples: []string{"arca rollback arca://app/db 3", "arca rollback --if-version 5 arca://app/db 3 # only if nobody wrote since version 5"},
		exits:    writeExits,
		flags:    withJSON(&asJSON, "print the result as JSON (serve's result.rollback)", func(fs *flag.FlagSet) { ifVersionFlag(fs, &ifv) }),
		run: func(ctx context.Context, c *cli, fs *verbFlags, args []string) error {
			return c.vaultVerb(ctx, fs, args, 2, func(ctx context.Context, svc *ops.Service, pos []string) error {
				v, err := strconv.ParseUint(pos[1], 10, 64)
				if err != nil || v == 0 {
					return usagef("rollback: VERSION %q is not a version (an integer from 1)", pos[1])
				}
				res, err := svc.Rollback(ctx, ops.Request{Ref: pos[0], Version: v, IfVersion: ifv.ptr()})
				if err != nil || *asJSON {
					return jsonOr(c, res, err)
				}
				fmt.Fprintf(c.stdout, "%s rolled back to the value of version %d as version %d in env %s\n", res.Ref, res.RolledBackFrom, res.Version, res.Env)
				return nil
			})
		},
	}
}

func undeleteCommand() *command {
	var (
		asJSON *bool
		ifv    versionFlag
	)
	return &command{
		name: "undelete", args: "REF", summary: "bring back a removed secret, as a new version",
		text:     "Make the last version of a secret rm removed current again, written as a new version; possible while the vault's keep_deleted has not passed (arca list --deleted shows what can be).",
		examples: []string{"arca undelete arca://app/db", "arca undelete --if-version 0 arca://app/db # only if nothing was written since the rm"},
		exits:    writeExits,
		flags:    withJSON(&asJSON, "print the result as JSON (serve's result.undelete)", func(fs *flag.FlagSet) { ifVersionFlag(fs, &ifv) }),
		run: func(ctx context.Context, c *cli, fs *verbFlags, args []string) error {
			return c.vaultVerb(ctx, fs, args, 1, func(ctx context.Context, svc *ops.Service, pos []string) error {
				res, err := svc.Undelete(ctx, ops.Request{Ref: pos[0], IfVersion: ifv.ptr()})
				if err != nil || *asJSON {
					return jsonOr(c, res, err)
				}
				fmt.Fprintf(c.stdout, "%s undeleted as version %d in env %s\n", res.Ref, res.Version, res.Env)
				return nil
			})
		},
	}
}

func destroyCommand() *command {
	var (
		asJSON, yes *bool
		versions    versionsFlag
	)
	return &command{
		name: "destroy", args: "REF", summary: "erase versions of a secret for good",
		text:     "Erase the versions given with --version (once each), or every version of REF when none is given: a deliberate loss, which no rollback or undelete can undo. On a terminal arca asks first; --yes skips the question. Elsewhere it proceeds.",
		examples: []string{"arca destroy --version 2 --version 3 arca://app/db", "arca destroy --yes arca://app/old-token # every version"},
		exits:    vaultExits,
		flags: withJSON(&asJSON, "print the result as JSON (serve's result.destroy)", func(fs *flag.FlagSet) {
			fs.Var(&versions, "version", "erase version `N` (repeat for more); none: every version")
			yes = fs.Bool("yes", false, "do not ask for confirmation on a terminal")
		}),
		run: func(ctx context.Context, c *cli, fs *verbFlags, args []string) error {
			return c.vaultVerb(ctx, fs, args, 1, func(ctx context.Context, svc *ops.Service, pos []string) error {
				if c.stdinTTY && !*yes {
					if err := c.confirmDestroy(pos[0], versions); err != nil {
						return err
					}
				}
				req := ops.Request{Ref: pos[0]}
				if len(versions) > 0 {
					req.Versions = versions
				}
				res, err := svc.Destroy(ctx, req)
				if err != nil || *asJSON {
					return jsonOr(c, res, err)
				}
				gone := ""
				if res.Removed {
					gone = "; no version of it is left"
				}
				fmt.Fprintf(c.stdout, "%s in env %s: destroyed %s for good%s\n", res.Ref, res.Env, versionWords(res.Destroyed), gone)
				return nil
			})
		},
	}
}

// confirmDestroy asks on the terminal before a destroy, and refuses
// unless the answer is yes.
func (c *cli) confirmDestroy(ref string, versions []uint64) error {
	what := "every version of " + ref
	if len(versions) > 0 {
		what = versionWords(versions) + " of " + ref
	}
	fmt.Fprintf(c.stderr, "Destroy %s? This cannot be undone. Type yes to go on: ", what)
	line, err := readAnswer(c.stdin)
	if err != nil || strings.TrimSpace(line) != "yes" {
		return usagef("destroy: not confirmed, nothing destroyed (--yes skips the question)")
	}
	return nil
}

// readAnswer reads up to a newline, a byte at a time so that nothing past
// it is consumed; at most 64 bytes matter.
func readAnswer(r io.Reader) (string, error) {
	var b []byte
	one := make([]byte, 1)
	for len(b) < 64 {
		n, err := r.Read(one)
		if n == 1 && one[0] == '\n' {
			break
		}
		b = append(b, one[:n]...)
		if err != nil {
			return string(b), err
		}
	}
	return string(b), nil
}

// versionWords is "version 3" or "versions 1, 2".
func versionWords(vs []uint64) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = strconv.FormatUint(v, 10)
	}
	if len(vs) == 1 {
		return "version " + s[0]
	}
	return "versions " + strings.Join(s, ", ")
}

func changesCommand() *command {
	var (
		asJSON *bool
		since  *string
	)
	return &command{
		name: "changes", summary: "list the secrets whose state changed since a cursor",
		text:     "List each secret whose state changed since --since, once, with its state now (current, deleted or erased) and its version, then the cursor to ask with next. Without --since: only the current cursor. A reset line says the cursor is older than the vault accounts for: list again.",
		examples: []string{"arca changes # the current cursor", "arca changes --since \"$cursor\""},
		exits:    vaultExits,
		flags: withJSON(&asJSON, "print the result as JSON (serve's result.changes)", func(fs *flag.FlagSet) {
			since = fs.String("since", "", "the `CURSOR` an earlier changes printed")
		}),
		run: func(ctx context.Context, c *cli, fs *verbFlags, args []string) error {
			return c.vaultVerb(ctx, fs, args, 0, func(ctx context.Context, svc *ops.Service, _ []string) error {
				res, err := svc.Changes(ctx, ops.Request{Since: *since})
				if err != nil || *asJSON {
					return jsonOr(c, res, err)
				}
				if res.Reset {
					fmt.Fprintln(c.stdout, "reset")
				}
				for _, ch := range res.Changes {
					fmt.Fprintf(c.stdout, "%s\t%s\t%d\n", ch.Ref, ch.State, ch.Version)
				}
				if res.Truncated {
					c.warnf("more changed: ask again with the cursor")
				}
				fmt.Fprintf(c.stdout, "cursor\t%s\n", res.Cursor)
				return nil
			})
		},
	}
}
