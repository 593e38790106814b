package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/arca-secrets/arca/internal/glob"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/ref"
)

// listFilter is the PREFIX of `arca list [PREFIX]`, over a record's
// "ns/name": a namespace ("app", "app/"), the start of a name ("app/db"),
// or a glob ("app/db-*", "*/token"), with or without "arca://". A pinned
// ref (three segments) is refused: the env is chosen with --env.
func listFilter(pos []string) (func(nsName string) bool, error) {
	if len(pos) == 0 {
		return func(string) bool { return true }, nil
	}
	p := strings.TrimPrefix(pos[0], ref.Scheme)
	if strings.ContainsAny(p, "*?[") {
		if problem := glob.Problem(p); problem != "" {
			return nil, usagef("list: PREFIX %q: %s", pos[0], problem)
		}
		return func(s string) bool { return glob.Match(p, s) }, nil
	}
	if strings.Count(strings.TrimSuffix(p, "/"), "/") > 1 {
		return nil, usagef("list: PREFIX %q names an env: give a namespace or ns/name, and the env with --env", pos[0])
	}
	if !strings.Contains(p, "/") {
		p += "/"
	}
	return func(s string) bool { return strings.HasPrefix(s, p) }, nil
}

// printList writes the records: for a person (a terminal), an aligned
// table with a header and times relative to now; for a program (a pipe),
// one line per record of tab-separated ref, version, updated and rotated
// (RFC 3339 in UTC to the second, "-" when never rotated), no header.
// With deleted (list --deleted), each line ends with when the record was
// removed ("-" for one that was not).
func printList(w io.Writer, recs []ops.ListRecord, tty, deleted bool, now time.Time) error {
	if !tty {
		for _, r := range recs {
			line := fmt.Sprintf("%s\t%d\t%s\t%s", r.Ref, r.Version, stamp(r.UpdatedAt.Time), stamp(r.RotatedAt.Time))
			if deleted {
				line += "\t" + stamp(r.DeletedAt.Time)
			}
			if _, err := fmt.Fprintln(w, line); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "REF\tVERSION\tUPDATED\tROTATED"
	if deleted {
		head += "\tDELETED"
	}
	fmt.Fprintln(tw, head)
	for _, r := range recs {
		line := fmt.Sprintf("%s\t%d\t%s\t%s", r.Ref, r.Version, ago(r.UpdatedAt.Time, now), ago(r.RotatedAt.Time, now))
		if deleted {
			line += "\t" + ago(r.DeletedAt.Time, now)
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}

// stamp is t in UTC to the second, or "-" for the zero time.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// ago is t for a person: how long before now, or the date when it is
// over a month back (or ahead of now, from a skewed clock).
func ago(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	switch {
	case d < 0 || d >= 30*24*time.Hour:
		return t.UTC().Format("2006-01-02")
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d/time.Minute))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh ago", int(d/time.Hour))
	}
	return fmt.Sprintf("%dd ago", int(d/(24*time.Hour)))
}
