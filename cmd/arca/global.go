package main

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
)

// globalArgs takes the flags given before the verb: --config FILE and
// --env ENV (the defaults of every verb's own), --version (or -v), and the help
// flags. It returns what follows them, the verb first, and whether help or
// the version was asked for ("help", "version") with nothing after.
func (c *cli) globalArgs(args []string) (rest []string, asked string, err error) {
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && args[0] != "-" {
		name, value, hasValue := strings.Cut(strings.TrimLeft(args[0], "-"), "=")
		switch name {
		case "h", "help":
			return args[1:], "help", nil
		case "version", "v":
			return args[1:], "version", nil
		case "config", "env":
			if !hasValue {
				if len(args) < 2 {
					return nil, "", usagef("flag needs an argument: --%s (usage: arca [--config FILE] [--env ENV] <command> ...)", name)
				}
				value, args = args[1], args[1:]
			}
			if name == "config" {
				c.global.config = value
			} else {
				c.global.env = value
			}
			args = args[1:]
		default:
			return nil, "", usagef("unknown flag %q before the command%s (run arca help)", args[0], suggestion(name, globalFlags(), "--"))
		}
	}
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	return args, "", nil
}

// globalFlags are the flags globalArgs takes, by name.
func globalFlags() []string { return []string{"config", "env", "version", "help"} }

// suggestion is `; did you mean "PREFIX+x"?` for the candidate closest to
// word, when one is close enough to be a typo; else "".
func suggestion(word string, candidates []string, prefix string) string {
	best, bestDist := "", 3
	for _, cand := range candidates {
		d := editDistance(word, cand)
		if d < bestDist || (d == bestDist && best != "" && cand < best) {
			best, bestDist = cand, d
		}
	}
	// One edit in a short word, two in a longer one; or a prefix.
	if best == "" || bestDist > max(1, len(word)/3) && !(word != "" && strings.HasPrefix(best, word)) {
		return ""
	}
	return fmt.Sprintf("; did you mean %q?", prefix+best)
}

// suggestFlag is the suggestion for the flag a parse error names as not
// defined in fs.
func suggestFlag(err error, fs *flag.FlagSet) string {
	const undefined = "flag provided but not defined: -"
	msg := err.Error()
	if errors.Is(err, flag.ErrHelp) || !strings.HasPrefix(msg, undefined) {
		return ""
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	slices.Sort(names)
	return suggestion(strings.TrimPrefix(msg, undefined), names, "--")
}

// editDistance is the optimal string alignment distance between a and b,
// in bytes: insertions, deletions, substitutions and swaps of neighbours
// ("lsit" is one from "list").
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// helpAsked says whether args, up to a "--", hold a help flag.
func helpAsked(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}
