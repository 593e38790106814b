package inject

import (
	"slices"
	"strings"

	"github.com/arca-secrets/arca/ops/ref"
	"github.com/arca-secrets/arca/pdp"
)

// Merge is what a run or env hands over: every variable of environ (arca's
// environment) whose value is a ref, then every one of secrets (the
// --secret flags), a secret taking the place of a same-named variable;
// sorted by name, so the order of resolution (and of audit events and
// output) does not depend on the order of arca's environment.
func Merge(environ []string, secrets []Injection) []Injection {
	given := make(map[string]bool, len(secrets))
	for _, in := range secrets {
		given[in.Name] = true
	}
	var out []Injection
	for _, in := range RefsInEnviron(environ) {
		if !given[in.Name] {
			out = append(out, in)
		}
	}
	out = append(out, secrets...)
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
		if len(val) >= len(ref.Scheme) && strings.EqualFold(val[:len(ref.Scheme)], ref.Scheme) {
			out = append(out, Injection{Name: name, Ref: val})
		}
	}
	return out
}

// ChildEnv is the child's whole environment: the entries of environ that
// the PDP allowlist keeps (SPEC §9), less those an injection replaces, then
// the injections.
func ChildEnv(environ []string, vars []Materialized) []string {
	injected := make(map[string]bool, len(vars))
	for _, v := range vars {
		injected[v.Name] = true
	}
	env := pdp.Allowlist(environ) // never nil: an empty list is an empty environment
	env = slices.DeleteFunc(env, func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return injected[name]
	})
	for _, v := range vars {
		env = append(env, v.Name+"="+string(v.Value.Reveal()))
	}
	return env
}
