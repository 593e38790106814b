package mcp

import (
	"fmt"
	"strconv"

	"github.com/arca-secrets/arca/ops"
)

// summary is a result in one short line, for a client that shows text:
// counts and names, never a value (a result holds none).
func summary(res ops.Result) string {
	switch r := res.(type) {
	case ops.ListResult:
		s := fmt.Sprintf("%d %s in env %s", len(r.Records), plural(len(r.Records), "record"), r.Env)
		if r.Truncated {
			s += fmt.Sprintf(" (%d more left out)", r.Omitted)
		}
		return s
	case ops.HistoryResult:
		cur := "no current version"
		if r.Current != nil {
			cur = "current version " + strconv.FormatUint(*r.Current, 10)
		}
		return fmt.Sprintf("%s: %s, %d %s kept", r.Ref, cur, len(r.Versions), plural(len(r.Versions), "version"))
	case ops.PutResult:
		return fmt.Sprintf("%s stored as version %d in env %s", r.Ref, r.Version, r.Env)
	case ops.ChangesResult:
		s := fmt.Sprintf("%d %s in env %s; next cursor %s", len(r.Changes), plural(len(r.Changes), "change"), r.Env, r.Cursor)
		if r.Reset {
			s += " (reset: list the env again)"
		}
		return s
	case *ops.HTTPResult:
		s := fmt.Sprintf("%s answered %d (%d bytes)", r.Service, r.Status, len(r.Body))
		if r.Truncated {
			s += ", truncated"
		}
		return s
	case *ops.ExecResult:
		if r.Signal != "" {
			return fmt.Sprintf("%s ended by signal %s", r.Action, r.Signal)
		}
		return fmt.Sprintf("%s exited %d", r.Action, r.ExitCode)
	}
	return "done"
}

// plural is word, with an s unless n is 1.
func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
