package inject

import (
	"slices"
	"strings"

	"github.com/arca-secrets/arca/internal/passenv"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/vault"
)

// Pass returns the variables of environ (arca's environment) that
// patterns pass on to the child as they are (arca run --pass, [run] pass;
// passenv.Select), in environ's order. A pattern a rule refuses is
// bad_request naming the rule; so is a passed variable that is also
// injected (a --secret, a --file, an env file's line, a ref of arca's
// environment): which of the two the child should get is not guessed.
// Nothing is read: call it before Materialize.
func Pass(environ, patterns []string, injections []Injection) ([]passenv.Var, error) {
	if len(patterns) > 2*passenv.MaxPatterns {
		return nil, ops.Errorf(manifest.BadRequest, "%d patterns to pass: at most %d", len(patterns), 2*passenv.MaxPatterns)
	}
	for _, p := range patterns {
		if prob := passenv.Problem(p); prob != "" {
			return nil, ops.Errorf(manifest.BadRequest, "pass %s", prob)
		}
	}
	// Whether the variable is set in arca's environment or not: the
	// refusal does not come and go with it.
	for _, in := range injections {
		if p := passenv.Match(patterns, in.Name); p != "" {
			return nil, ops.Errorf(manifest.BadRequest, "pass %s: %s is also injected (a --secret, a --file, an env file's line); a variable is passed or injected, not both (rule: one source per name)", p, in.Name)
		}
	}
	return passenv.Select(environ, patterns), nil
}

// WithPassed is vars and the passed variables, as literals (no secrets:
// never masked), sorted by name: what arca env prints.
func WithPassed(vars []Materialized, passed []passenv.Var) []Materialized {
	out := slices.Clone(vars)
	for _, v := range passed {
		out = append(out, Materialized{Name: v.Name, Value: vault.NewSecret([]byte(v.Value)), Literal: true})
	}
	slices.SortStableFunc(out, func(a, b Materialized) int { return strings.Compare(a.Name, b.Name) })
	return out
}
