package pdp

import "strings"

// Allowlist returns the entries of environ the PDP child may see: PATH HOME
// USER LOGNAME SHELL LANG LC_* TERM TZ TMPDIR, in their order in environ.
// Names match exactly (case matters); an entry without "=" is dropped. The
// result is never nil, so that an empty allowlist gives the child an empty
// environment rather than arca's.
func Allowlist(environ []string) []string {
	out := make([]string, 0, 12)
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if ok && allowedName(name) {
			out = append(out, kv)
		}
	}
	return out
}

func allowedName(name string) bool {
	switch name {
	case "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "TERM", "TZ", "TMPDIR":
		return true
	}
	return strings.HasPrefix(name, "LC_")
}
