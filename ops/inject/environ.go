package inject

import (
	"slices"
	"strings"

	"github.com/arca-secrets/arca/internal/passenv"
	"github.com/arca-secrets/arca/pdp"
)

// Merge is what a run or env hands over, each source taking the place of
// a same-named variable of the sources before it: every variable of
// environ (arca's environment) whose value is a ref; then the entries of
// each env file (ReadEnvFile), in the order the files were given; then
// every one of flags (--secret, --file), kept as given, so that a name
// twice among them is left to Materialize to refuse. A ref that is
// replaced is never read. The result is sorted by name, so the order of
// resolution (and of audit events and output) does not depend on the
// order of arca's environment or of the flags.
func Merge(environ []string, envFiles [][]Injection, flags []Injection) []Injection {
	byName := map[string]Injection{}
	for _, in := range RefsInEnviron(environ) {
		byName[in.Name] = in
	}
	for _, file := range envFiles {
		for _, in := range file {
			byName[in.Name] = in
		}
	}
	for _, in := range flags {
		delete(byName, in.Name)
	}
	out := make([]Injection, 0, len(byName)+len(flags))
	for _, in := range byName {
		out = append(out, in)
	}
	out = append(out, flags...)
	slices.SortStableFunc(out, func(a, b Injection) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// RefsInEnviron returns, in environ's order, the variables whose value is
// meant as a ref: it starts with "arca://" (in any case, so that a mistyped
// ARCA:// fails loudly instead of reaching a child as text). Materialize
// then refuses any that is not a valid ref as bad_request. Variables named
// ARCA_* are arca's own settings and are never picked; entries without "="
// are skipped; of a name given twice, the first counts (as for getenv).
func RefsInEnviron(environ []string) []Injection {
	var out []Injection
	seen := map[string]bool{}
	for _, kv := range environ {
		name, val, ok := strings.Cut(kv, "=")
		if !ok || seen[name] {
			continue
		}
		seen[name] = true
		if strings.HasPrefix(name, reservedPrefix) {
			continue
		}
		if isRef(val) {
			out = append(out, Injection{Name: name, Ref: val})
		}
	}
	return out
}

// ChildEnv is the child's whole environment: the entries of environ that
// the PDP allowlist keeps (SPEC §9), less those an injection replaces, then
// the passed variables (Pass) in environ's order, then the injections.
func ChildEnv(environ []string, passed []passenv.Var, vars []Materialized) []string {
	injected := make(map[string]bool, len(vars))
	for _, v := range vars {
		injected[v.Name] = true
	}
	env := pdp.Allowlist(environ) // never nil: an empty list is an empty environment
	env = slices.DeleteFunc(env, func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return injected[name]
	})
	for _, v := range passed {
		if !injected[v.Name] {
			env = append(env, v.Name+"="+v.Value)
		}
	}
	for _, v := range vars {
		env = append(env, v.Name+"="+string(v.Value.Reveal()))
	}
	return env
}
