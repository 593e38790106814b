package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/audit/trail"
	"github.com/arca-secrets/arca/internal/termsafe"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
)

// auditCommand is `arca audit [FILTERS] [--json] [--follow|--merge] [FILE...]`
// (the events of the CLI's audit file, or of FILEs: captured serve wires
// too; with --merge, the FILEs' events in one time-ordered view), `arca audit verify [--anchor LINE:DIGEST] [FILE...]` (whether their
// chains hold) and `arca audit anchor [FILE]` (the anchor of the last
// line, to record elsewhere). Reading the trail is not itself audited: it is no vault op.
func auditCommand() *command {
	var af auditShowFlags
	return &command{
		name: "audit", args: "[FILE...]", summary: "show the audit trail (filters, --json, --follow); verify its chain; print its anchor",
		text:     "Show the audit trail: the CLI's audit file, or the FILEs given (a captured serve wire too), filtered by time, env, ref, op, outcome or actor; --follow prints events as they are appended. The subcommands verify the chain and print an anchor.",
		examples: []string{"arca audit --since 24h --outcome denied", "arca audit --json --ref 'app/*' | jq .actor", "arca audit --follow"},
		exits:    plainExits,
		flags:    af.register,
		run: func(ctx context.Context, c *cli, fs *verbFlags, args []string) error {
			return c.auditShow(ctx, fs, args, af)
		},
		subs: []*command{auditVerifyCommand(), auditAnchorCommand()},
	}
}

func auditVerifyCommand() *command {
	var anchor *string
	return &command{
		name: "verify", args: "[FILE...]", summary: "check each trail's chain, and that it still holds an anchor",
		text:     "Check each FILE's chain (the CLI's audit file when none; - reads stdin, as a trail piped from elsewhere): every line's layout, seq and link. With --anchor LINE:DIGEST the trail must still hold its lines up to that one as they were when the anchor was taken: a trail cut short or rewritten, or with a serve session cut, added or moved, fails.",
		examples: []string{"arca audit verify", "arca audit verify --anchor \"$(cat anchor.txt)\" audit.log", "ssh host cat audit.log | arca audit verify -"},
		exits:    "0 every chain holds; 1 one does not, or a file cannot be read; 2 usage",
		flags: func(fs *flag.FlagSet) {
			anchor = fs.String("anchor", "", "the `LINE:DIGEST` the trail must hold (arca audit anchor printed it)")
		},
		run: func(_ context.Context, c *cli, fs *verbFlags, args []string) error {
			return c.auditVerify(fs, args, anchor)
		},
	}
}

func auditAnchorCommand() *command {
	return &command{
		name: "anchor", args: "[FILE]", summary: "print the anchor of a trail's last event",
		text:     "Print the anchor of FILE's last line (LINE:DIGEST, a digest of every line up to it and of where each serve session starts), to keep somewhere the trail's writer cannot reach and pass to audit verify --anchor later.",
		examples: []string{"arca audit anchor > anchor.txt"},
		exits:    plainExits,
		run: func(_ context.Context, c *cli, fs *verbFlags, args []string) error {
			return c.auditAnchor(fs, args)
		},
	}
}

// auditFiles is files, or the CLI's audit file when there are none.
func (c *cli) auditFiles(co common, files []string) ([]string, error) {
	if len(files) > 0 {
		return files, nil
	}
	cfg, err := ops.LoadConfig(co.config, c.getenv)
	if err != nil {
		return nil, err
	}
	path, err := cfg.AuditFile()
	if err != nil {
		return nil, err
	}
	return []string{path}, nil
}

// auditVerify is `arca audit verify`: each file's chain, one line each on
// stdout; exit 1 when any does not hold.
func (c *cli) auditVerify(fs *verbFlags, args []string, anchorFlag *string) error {
	files, err := c.parse(fs, args, anyArgs)
	if err != nil {
		return err
	}
	var anchor *trail.Anchor
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "anchor" })
	if given {
		// An empty --anchor (a file that was missing or empty, read
		// through $(cat ...)) is refused, never taken as no anchor.
		a, err := trail.ParseAnchor(*anchorFlag)
		if err != nil {
			return usagef("--anchor: %v", err)
		}
		anchor = &a
	}
	if files, err = c.auditFiles(fs.co, files); err != nil {
		return err
	}
	if anchor != nil && len(files) > 1 {
		return usagef("--anchor vouches for one trail: give one FILE")
	}
	if i := slices.Index(files, "-"); i >= 0 && slices.Contains(files[i+1:], "-") {
		return usagef("- reads stdin, which holds one trail: give it once")
	}
	broken := 0
	for _, path := range files {
		r, done, err := c.trailInput(path)
		if err != nil {
			return err
		}
		res, err := trail.Verify(r, anchor)
		done()
		if path == "-" {
			path = "stdin"
		}
		var b *trail.Break
		switch {
		case errors.As(err, &b):
			broken++
			fmt.Fprintf(c.stdout, "%s: BROKEN at line %d: %s\n", termsafe.Escape(path), b.Line, termsafe.Escape(b.Reason))
		case err != nil:
			return opErrorf("%s: %v", path, err)
		default:
			fmt.Fprintf(c.stdout, "%s: %s\n", termsafe.Escape(path), describeChain(res, anchor))
		}
	}
	if broken > 0 {
		return reported{opErrorf("%d of %d trails do not hold", broken, len(files))}
	}
	return nil
}

// trailInput opens the trail at path for reading, or stdin for "-" (its
// lines bounded as a file's are: trail.Verify reads a line at a time, each
// at most audit.MaxLine bytes); done closes it.
func (c *cli) trailInput(path string) (r io.Reader, done func(), err error) {
	if path == "-" {
		return c.stdin, func() {}, nil
	}
	f, err := openTrail(path)
	if err != nil {
		return nil, nil, err
	}
	return f, func() { f.Close() }, nil
}

// describeChain says what a trail that holds is.
func describeChain(res trail.Result, anchor *trail.Anchor) string {
	if res.Lines == 0 {
		return "ok, empty"
	}
	s := fmt.Sprintf("ok, %d events, seq %d to %d", res.Lines, res.First, res.LastSeq)
	if res.Streams > 1 {
		s += fmt.Sprintf(", %d serve processes", res.Streams)
	}
	if res.MidChain {
		s += "; its first event links to one it does not hold (lines before it were removed, or the file rotated)"
	}
	if anchor != nil {
		s += "; holds the anchor " + anchor.String()
	}
	return s + "; anchor " + res.Last.String()
}

// auditAnchor is `arca audit anchor [FILE]`: the anchor of the last line
// of a trail that holds, as LINE:DIGEST on stdout.
func (c *cli) auditAnchor(fs *verbFlags, args []string) error {
	files, err := c.parse(fs, args, anyArgs)
	if err != nil {
		return err
	}
	if len(files) > 1 {
		return usagef("audit anchor reads one FILE, not %d", len(files))
	}
	if files, err = c.auditFiles(fs.co, files); err != nil {
		return err
	}
	f, err := openTrail(files[0])
	if err != nil {
		return err
	}
	defer f.Close()
	res, err := trail.Verify(f, nil)
	if err != nil {
		return opErrorf("%s: the chain does not hold, so it has no anchor: %v", files[0], err)
	}
	if res.Lines == 0 {
		return opErrorf("%s holds no events", files[0])
	}
	fmt.Fprintln(c.stdout, res.Last.String())
	return nil
}

// auditShowFlags are the filters and the output of `arca audit`.
type auditShowFlags struct {
	since, until, ref, op, outcome, actor *string
	user, host                            *string
	json, follow, merge                   *bool
}

// register adds the filters and the output flags to fs.
func (af *auditShowFlags) register(fs *flag.FlagSet) {
	af.since = fs.String("since", "", "events at or after `WHEN` (RFC 3339, or a duration back from now: 90m, 24h)")
	af.until = fs.String("until", "", "events before `WHEN`")
	af.ref = fs.String("ref", "", "events whose ref (ns/name) matches `GLOB`")
	af.op = fs.String("op", "", "events of `OP` (get, put, list, …; start and stop too)")
	af.outcome = fs.String("outcome", "", "events of `OUTCOME`: ok, denied, not_found, error or bad_request")
	af.actor = fs.String("actor", "", "events whose actor matches `GLOB`")
	af.user = fs.String("user", "", "events whose user (the OS account that wrote them) matches `GLOB`")
	af.host = fs.String("host", "", "events whose host (the machine that wrote them) matches `GLOB`")
	af.json = fs.Bool("json", false, "print each event's line as it is in the trail")
	af.follow = fs.Bool("follow", false, "keep reading: print events as they are appended, until interrupted")
	af.merge = fs.Bool("merge", false, "print the events of every FILE in one time-ordered view, each with its file, once each FILE's chain holds")
}

// auditShow is `arca audit`: the events that pass the filters, as a table
// or as their lines (--json), then, with --follow, those appended after.
func (c *cli) auditShow(ctx context.Context, fs *verbFlags, args []string, af auditShowFlags) error {
	files, err := c.parse(fs, args, anyArgs)
	if err != nil {
		return err
	}
	co := fs.co
	f, err := af.filter(co, c.now())
	if err != nil {
		return err
	}
	if *af.merge {
		if *af.follow || len(files) == 0 {
			return usagef("--merge reads the FILEs given, each to its end: give FILEs, and no --follow")
		}
		return c.auditMerge(files, f, *af.json)
	}
	if files, err = c.auditFiles(co, files); err != nil {
		return err
	}
	if *af.follow && len(files) != 1 {
		return usagef("--follow reads one FILE, not %d", len(files))
	}
	if !*af.follow { // a file that does not open: said before any output
		if err := distinctTrails(files); err != nil {
			return err
		}
	}
	out := c.stdout
	if *af.json {
		out = c.raw.stdout // the lines exactly as they are in the trail
	}
	w := bufio.NewWriter(out)
	defer w.Flush()
	print := func(e trail.Entry) error { return printEvent(w, e, *af.json) }
	if !*af.json {
		printHeader(w)
	}
	if *af.follow {
		ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
		return followOut(ctx, w, files[0], f, print)
	}
	for _, path := range files {
		fh, err := openTrail(path)
		if err != nil {
			return err
		}
		err = trail.Scan(fh, f, print)
		fh.Close()
		if err != nil {
			return opErrorf("%s: %v", path, err)
		}
	}
	return nil
}

// followOut follows path, flushing w after each event.
func followOut(ctx context.Context, w *bufio.Writer, path string, f trail.Filter, print func(trail.Entry) error) error {
	err := trail.Follow(ctx, path, f, 250*time.Millisecond, func(e trail.Entry) error {
		if err := print(e); err != nil {
			return err
		}
		return w.Flush()
	})
	if errors.Is(err, os.ErrNotExist) {
		return usagef("audit trail: %v", err)
	}
	if err != nil {
		return opErrorf("%s: %v", path, err)
	}
	return nil
}

// filter is the trail.Filter the flags ask for; --env is the common flag.
func (af auditShowFlags) filter(co common, now time.Time) (trail.Filter, error) {
	f := trail.Filter{Env: co.env, Ref: *af.ref, Op: *af.op, Outcome: *af.outcome, Actor: *af.actor, User: *af.user, Host: *af.host}
	var err error
	if f.Since, err = parseWhen("--since", *af.since, now); err != nil {
		return f, err
	}
	if f.Until, err = parseWhen("--until", *af.until, now); err != nil {
		return f, err
	}
	switch f.Outcome {
	case "", audit.OK, audit.Denied, audit.NotFound, audit.Error, audit.BadRequest:
	default:
		return f, usagef("--outcome must be ok, denied, not_found, error or bad_request")
	}
	if err := f.Check(); err != nil {
		return f, usagef("%v", err)
	}
	if err := manifest.CheckEventName(f.Op); err != nil {
		return f, usagef("%v", err)
	}
	return f, nil
}

// parseWhen reads the time of flag, "" for none.
func parseWhen(flag, s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := trail.ParseWhen(s, now)
	if err != nil {
		return time.Time{}, usagef("%s %v", flag, err)
	}
	return t, nil
}

// The table's columns, fixed so that followed events line up too.
const eventRow = "%-20s %7s %-9s %-11s %-10s %-28s %-16s %-20s %s\n"

func printHeader(w io.Writer) {
	fmt.Fprintf(w, eventRow, "TIME", "SEQ", "EVENT", "OUTCOME", "ENV", "REF", "ACTOR", "USER@HOST", "MESSAGE")
}

// printEvent prints e: its line as it is, or a row of the table. What the
// row shows from the trail is quoted when it holds anything but printable
// text, so a line written to a trail cannot drive the terminal.
func printEvent(w io.Writer, e trail.Entry, asJSON bool) error {
	if asJSON {
		_, err := fmt.Fprintf(w, "%s\n", e.Line)
		return err
	}
	ev := e.Event
	msg := ev.Message
	if ev.Code != "" {
		msg = ev.Code + ": " + msg
	}
	if ev.Policy != nil && ev.Policy.Reason != "" {
		msg += " (policy: " + ev.Policy.Reason + ")"
	}
	_, err := fmt.Fprintf(w, eventRow, e.TS.UTC().Format("2006-01-02 15:04:05Z"), strconv.FormatUint(ev.Seq, 10),
		shown(ev.Event), shown(ev.Outcome), shown(ev.Env), shown(ev.Ref), shown(ev.Actor), shown(userAtHost(ev)), shown(msg))
	return err
}

// userAtHost is who wrote an event, where: user@host, either alone when
// the event has only one, "" when neither (a serve request's event).
func userAtHost(ev audit.Event) string {
	switch {
	case ev.User != "" && ev.Host != "":
		return ev.User + "@" + ev.Host
	case ev.Host != "":
		return "@" + ev.Host
	}
	return ev.User
}

// shown is s as the table shows it: as it is when printable, else quoted
// (termsafe.Quote); "-" when empty.
func shown(s string) string {
	if s == "" {
		return "-"
	}
	return termsafe.Quote(s)
}
