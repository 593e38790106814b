// Package allowenv is the allowlist of the environment a child of arca's
// sees (a PDP, a command arca runs, an action): the variables a program
// needs to run and nothing that could carry a secret or change how it
// starts.
package allowenv

import "strings"

// Filter returns the entries of environ a child may see: PATH HOME USER
// LOGNAME SHELL LANG LC_* TERM TZ TMPDIR, in their order in environ.
// Names match exactly (case matters); an entry without "=" is dropped.
// The result is never nil, so that an empty allowlist gives the child an
// empty environment rather than arca's.
func Filter(environ []string) []string {
	out := make([]string, 0, 12)
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if ok && Allowed(name) {
			out = append(out, kv)
		}
	}
	return out
}

// allowedPrefix starts the names on the allowlist by prefix.
const allowedPrefix = "LC_"

// Allowed reports whether the variable name is on the allowlist.
func Allowed(name string) bool {
	switch name {
	case "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "TERM", "TZ", "TMPDIR":
		return true
	}
	return strings.HasPrefix(name, allowedPrefix)
}

// AllowedPrefix reports whether every name that starts with prefix is on
// the allowlist (LC_, LC_T, …).
func AllowedPrefix(prefix string) bool { return strings.HasPrefix(prefix, allowedPrefix) }
