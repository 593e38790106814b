package ops

import (
	"path"
	"strconv"
	"strings"
)

// vaultOps lists, for messages, the ops a guardrail rule can name.
const vaultOps = "get, put, rm, rotate, list, check"

// isVaultOp reports whether op is one of vaultOps: the ops guardrails and the
// PDP govern (the meta-ops manifest and shutdown are not).
func isVaultOp(op string) bool {
	switch op {
	case "get", "put", "rm", "rotate", "list", "check":
		return true
	}
	return false
}

// Guardrail returns the reason of the first rule that denies op on
// env/ref/actor, and whether one did. ref is the bare "ns/name" ("" for
// list/check); actor is "" when none was claimed. Every rule denies; the
// first whose given fields all match decides.
func (c *Config) Guardrail(env, op, ref, actor string) (reason string, denied bool) {
	if !isVaultOp(op) {
		return "", false
	}
	for i := range c.Guardrails.Rules {
		if r := &c.Guardrails.Rules[i]; r.matches(env, op, ref, actor) {
			return r.Reason, true
		}
	}
	return "", false
}

func (r *Rule) matches(env, op, ref, actor string) bool {
	return globMatches(r.Env, env) && r.matchesOp(op) &&
		globMatches(r.Ref, ref) && globMatches(r.Actor, actor)
}

func (r *Rule) matchesOp(op string) bool {
	if len(r.Ops) == 0 {
		return true
	}
	for _, o := range r.Ops {
		if o == op {
			return true
		}
	}
	return false
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
	ok, err := path.Match(pattern, s)
	return ok || err != nil
}

// problem describes what makes r invalid, or returns "".
func (r *Rule) problem() string {
	if strings.TrimSpace(r.Reason) == "" {
		return "reason is required"
	}
	if r.Ops != nil && len(r.Ops) == 0 {
		return "ops is empty (omit it to mean every op)"
	}
	for _, op := range r.Ops {
		if !isVaultOp(op) {
			return "ops: unknown op " + strconv.Quote(op) + " (want " + vaultOps + ")"
		}
	}
	for _, g := range [...]struct{ key, pattern string }{{"env", r.Env}, {"ref", r.Ref}, {"actor", r.Actor}} {
		if _, err := path.Match(g.pattern, ""); err != nil {
			return g.key + ": invalid glob " + strconv.Quote(g.pattern)
		}
	}
	return ""
}
