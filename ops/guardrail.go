package ops

import (
	"github.com/arca-secrets/arca/internal/glob"
	"github.com/arca-secrets/arca/ops/config"
)

// Guardrail returns the reason of the first rule that denies op on
// env/ref/actor, and whether one did. ref is the bare "ns/name" ("" for
// list/check); actor is "" when none was claimed. Every rule denies; the
// first whose given fields all match decides.
func (c *Config) Guardrail(env, op, ref, actor string) (reason string, denied bool) {
	if !config.IsVaultOp(op) {
		return "", false
	}
	for i := range c.Guardrails.Rules {
		if r := &c.Guardrails.Rules[i]; ruleMatches(r, env, op, ref, actor) {
			return r.Reason, true
		}
	}
	return "", false
}

func ruleMatches(r *config.Rule, env, op, ref, actor string) bool {
	return globMatches(r.Env, env) && ruleMatchesOp(r, op) &&
		globMatches(r.Ref, ref) && globMatches(r.Actor, actor)
}

func ruleMatchesOp(r *config.Rule, op string) bool {
	if len(r.Ops) == 0 {
		return true
	}
	for _, o := range r.Ops {
		if o == op || glob.Match(o, op) {
			return true
		}
		if c := coveredBy(op); c != "" && (o == c || glob.Match(o, c)) {
			return true
		}
	}
	return false
}

// coveredBy is the op whose guardrail rules also cover op, "" for none:
// a rule must never miss what it seems to cover (SPEC §11). Reading a
// ref's versions (history) is covered by its get; rollback and undelete
// write a value as put does, and destroy erases as rm does; changes
// reveals names as list does. (A get of an earlier version is a get.)
func coveredBy(op string) string {
	switch op {
	case "history":
		return "get"
	case "rollback", "undelete":
		return "put"
	case "destroy":
		return "rm"
	case "changes":
		return "list"
	}
	return ""
}

// globMatches reports whether the rule field pattern matches s: an omitted
// pattern matches anything, a given one never matches an absent s. A
// malformed pattern (only possible in a Config that skipped validation)
// matches, so the rule fails closed.
func globMatches(pattern, s string) bool {
	if pattern == "" {
		return true
	}
	if s == "" {
		return false
	}
	return glob.Match(pattern, s)
}
