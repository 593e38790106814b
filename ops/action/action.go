// Package action runs one configured action (SPEC §13) on a caller's
// behalf: it checks the caller's extra arguments against the action's
// rules, runs the fixed argv with them in an environment given whole, with
// stdin on /dev/null, in a process group of its own killed at the deadline,
// and returns the raw outcome with each output stream capped.
//
// It knows nothing of refs, the PDP, audit or scrubbing: the ops layer
// resolves the environment, decides, audits and scrubs what Run returns.
// The environment holds credentials, so no part of it ever reaches an
// error message.
package action

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/arca-secrets/arca/ops/config"
)

// Bounds of one extra argument, and how much of a refused one a refusal
// quotes.
const (
	MaxArgBytes   = 4096
	quoteArgBytes = 64
)

// Result is the raw outcome of a run: its exit, and each output stream cut
// at the action's MaxOutputBytes.
type Result struct {
	ExitCode int    // the exit status; -1 when killed by a signal
	Signal   string // the signal that killed it ("SIGKILL"); "" when it exited
	TimedOut bool   // the deadline passed before it exited, and the group was killed
	Stdout   []byte
	Stderr   []byte
	// Truncated reports a stream the child wrote past the cap; what lay
	// beyond it was read and discarded.
	Truncated struct{ Stdout, Stderr bool }
	BytesOut  int64 // stdout and stderr bytes the child wrote, counted past the cap too
}

// Refusal is a request the action does not allow (bad_request): its extra
// arguments break a rule. Msg names the argument by index and the rule,
// and quotes at most quoteArgBytes of it.
type Refusal struct{ Msg string }

func (r *Refusal) Error() string { return r.Msg }

// StartError is a child that could not be started (no such file, not
// executable, not in the environment's PATH). Msg names argv[0] and why,
// never anything of the environment.
type StartError struct{ Msg string }

func (e *StartError) Error() string { return e.Msg }

// CheckArgs checks the extra arguments against cfg: at most cfg.MaxArgs,
// each at most MaxArgBytes without a NUL byte, each matched whole by
// cfg.ArgsRE (nil: no extra argument is allowed). A broken rule is a
// *Refusal naming the first argument that breaks it.
func CheckArgs(cfg config.Action, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if cfg.ArgsRE == nil {
		return &Refusal{Msg: "the action takes no extra argument"}
	}
	if len(args) > cfg.MaxArgs {
		return &Refusal{Msg: fmt.Sprintf("%d extra arguments, the action takes at most %d", len(args), cfg.MaxArgs)}
	}
	for i, a := range args {
		if why := argProblem(cfg, a); why != "" {
			return &Refusal{Msg: fmt.Sprintf("argument %d %s %s", i, quoteArg(a), why)}
		}
	}
	return nil
}

// argProblem names the rule arg breaks, or "". The match must span the
// whole argument: an anchored ArgsRE always does when it matches; an
// unanchored one is held to its leftmost match, which can only refuse more.
func argProblem(cfg config.Action, arg string) string {
	switch {
	case len(arg) > MaxArgBytes:
		return fmt.Sprintf("is longer than %d bytes", MaxArgBytes)
	case strings.IndexByte(arg, 0) >= 0:
		return "holds a NUL byte"
	}
	if loc := cfg.ArgsRE.FindStringIndex(arg); loc == nil || loc[0] != 0 || loc[1] != len(arg) {
		return fmt.Sprintf("does not match the action's args %q", cfg.ArgsRE.String())
	}
	return ""
}

// quoteArg quotes arg (%q), cut to at most quoteArgBytes at a character
// boundary; a cut one is followed by "...".
func quoteArg(arg string) string {
	if len(arg) <= quoteArgBytes {
		return fmt.Sprintf("%q", arg)
	}
	n := quoteArgBytes
	for n > 0 && !utf8.RuneStart(arg[n]) {
		n--
	}
	return fmt.Sprintf("%q...", arg[:n])
}
