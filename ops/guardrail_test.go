package ops

import (
	"testing"

	"github.com/arca-secrets/arca/ops/config"
)

func TestGuardrail(t *testing.T) {
	const doc = `
[[guardrails.rule]]
env = "prod"
ops = ["get"]
ref = "billing/*"
actor = "agent:*"
reason = "no agent reads of prod billing"

[[guardrails.rule]]
env = "prod"
ops = ["rm", "rotate"]
reason = "no prod deletes"

[[guardrails.rule]]
ref = "billing/*"
ops = ["put", "rm"]
reason = "billing is read-only"

[[guardrails.rule]]
env = "stag?"
ops = ["list"]
reason = "no staging lists"

[[guardrails.rule]]
actor = "ci:*"
ops = ["check"]
reason = "ci does not check"

[[guardrails.rule]]
env = "prod*"
reason = "prod catch-all"
`
	tests := []struct {
		name                string
		env, op, ref, actor string
		reason              string // "" when allowed
	}{
		{"all fields match", "prod", "get", "billing/stripe", "agent:claude", "no agent reads of prod billing"},
		{"actor rule vs no actor falls through", "prod", "get", "billing/stripe", "", "prod catch-all"},
		{"actor glob mismatch falls through", "prod", "get", "billing/stripe", "human:ann", "prod catch-all"},
		{"ref glob mismatch falls through", "prod", "get", "web/stripe", "agent:claude", "prod catch-all"},
		{"ref glob crosses slash", "dev", "put", "billing/a/b", "", "billing is read-only"},
		{"first match wins over later match", "prod", "rm", "billing/stripe", "", "no prod deletes"},
		{"ops list", "prod", "rotate", "web/tls", "", "no prod deletes"},
		{"rule without env", "dev", "put", "billing/stripe", "", "billing is read-only"},
		{"ops not listed", "dev", "get", "billing/stripe", "", ""},
		{"ref rule never matches list", "dev", "list", "", "", ""},
		{"env glob with ?", "stage", "list", "", "", "no staging lists"},
		{"env glob mismatch", "stages", "list", "", "", ""},
		{"actor rule matches claimed actor", "dev", "check", "", "ci:build-7", "ci does not check"},
		{"actor rule vs no actor", "dev", "check", "", "", ""},
		{"omitted ops mean every vault op", "prod-eu", "list", "", "", "prod catch-all"},
		{"meta-ops are never denied", "prod", "manifest", "", "", ""},
		{"shutdown is never denied", "prod", "shutdown", "", "", ""},
		{"unknown op is never denied", "prod", "run", "", "", ""},
		{"no rule matches", "dev", "get", "web/tls", "agent:x", ""},
	}
	c, err := ParseConfig([]byte(doc), "arca.toml", envOf(nil))
	if err != nil {
		t.Fatalf("ParseConfig: %v", err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reason, denied := c.Guardrail(tc.env, tc.op, tc.ref, tc.actor)
			if denied != (tc.reason != "") || reason != tc.reason {
				t.Fatalf("Guardrail = %q, %v; want %q, %v", reason, denied, tc.reason, tc.reason != "")
			}
		})
	}
}

func TestGuardrailEdges(t *testing.T) {
	tests := []struct {
		name                string
		rules               []config.Rule
		env, op, ref, actor string
		reason              string
	}{
		{"no rules", nil, "prod", "get", "a/b", "", ""},
		{"empty rule denies every vault op", []config.Rule{{Reason: "frozen"}}, "dev", "list", "", "", "frozen"},
		{"star ref does not match a missing ref", []config.Rule{{Ref: "*", Reason: "r"}}, "dev", "check", "", "", ""},
		{"star actor does not match a missing actor", []config.Rule{{Actor: "*", Reason: "r"}}, "dev", "get", "a/b", "", ""},
		{"star actor matches any claimed actor", []config.Rule{{Actor: "*", Reason: "r"}}, "dev", "get", "a/b", "x", "r"},
		{"malformed glob fails closed", []config.Rule{{Ref: "a/[", Reason: "bad glob"}}, "dev", "get", "a/b", "", "bad glob"},
		{"malformed ops glob fails closed", []config.Rule{{Ops: []string{"[g"}, Reason: "bad glob"}}, "dev", "rm", "a/b", "", "bad glob"},
		{"star ref matches every ref", []config.Rule{{Ref: "*", Reason: "r"}}, "dev", "get", "a/b", "", "r"},
		{"exact names", []config.Rule{{Env: "dev", Ref: "a/b", Actor: "me", Ops: []string{"get"}, Reason: "r"}},
			"dev", "get", "a/b", "me", "r"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &Config{Config: config.Config{Guardrails: config.Guardrails{Rules: tc.rules}}}
			reason, denied := c.Guardrail(tc.env, tc.op, tc.ref, tc.actor)
			if denied != (tc.reason != "") || reason != tc.reason {
				t.Fatalf("Guardrail = %q, %v; want %q, %v", reason, denied, tc.reason, tc.reason != "")
			}
		})
	}
}

// In every field a "*" matches any run of characters, "/" included, and
// "?" any one: a deny rule covers what it seems to cover. One row per
// field, each with the match the old path.Match globs missed.
func TestGuardrailGlobsCrossSlash(t *testing.T) {
	tests := []struct {
		name                string
		rule                config.Rule
		env, op, ref, actor string
		denied              bool
	}{
		{"actor star, the contract's own example", config.Rule{Actor: "agent:*"}, "dev", "get", "a/b", "agent:ci/job-42", true},
		{"actor star, many slashes", config.Rule{Actor: "agent:*"}, "dev", "get", "a/b", "agent:org/team/ci/job-42", true},
		{"actor star, another prefix", config.Rule{Actor: "agent:*"}, "dev", "get", "a/b", "human:ann/agent:x", false},
		{"actor question mark crosses slash", config.Rule{Actor: "ci?x"}, "dev", "get", "a/b", "ci/x", true},
		{"ref star spans the name and more", config.Rule{Ref: "billing*"}, "dev", "get", "billing/card", "", true},
		{"ref star matches every ref", config.Rule{Ref: "*"}, "dev", "get", "web/tls", "", true},
		{"ref star in front", config.Rule{Ref: "*/card"}, "dev", "get", "billing/card", "", true},
		{"ref star stays a suffix match", config.Rule{Ref: "*/card"}, "dev", "get", "billing/cards", "", false},
		{"ref question mark crosses slash", config.Rule{Ref: "billing?card"}, "dev", "get", "billing/card", "", true},
		{"ref class", config.Rule{Ref: "[ab]*"}, "dev", "get", "billing/card", "", true},
		{"ref negated class", config.Rule{Ref: "[!ab]*"}, "dev", "get", "billing/card", "", false},
		{"env star", config.Rule{Env: "*"}, "qa-1", "list", "", "", true},
		{"env star matches anything after", config.Rule{Env: "prod*"}, "prod.eu/1", "get", "a/b", "", true},
		{"env range", config.Rule{Env: "qa-[0-9]"}, "qa-7", "list", "", "", true},
		{"env range miss", config.Rule{Env: "qa-[0-9]"}, "qa-x", "list", "", "", false},
		{"op star", config.Rule{Ops: []string{"r*"}}, "dev", "rotate", "a/b", "", true},
		{"op star, rm too", config.Rule{Ops: []string{"r*"}}, "dev", "rm", "a/b", "", true},
		{"op star miss", config.Rule{Ops: []string{"r*"}}, "dev", "get", "a/b", "", false},
		{"op star never reaches a meta-op", config.Rule{Ops: []string{"*"}}, "dev", "manifest", "", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.rule.Reason = "r"
			c := &Config{Config: config.Config{Guardrails: config.Guardrails{Rules: []config.Rule{tc.rule}}}}
			if _, denied := c.Guardrail(tc.env, tc.op, tc.ref, tc.actor); denied != tc.denied {
				t.Fatalf("Guardrail(%q, %q, %q, %q) denied = %v, want %v", tc.env, tc.op, tc.ref, tc.actor, denied, tc.denied)
			}
		})
	}
}
