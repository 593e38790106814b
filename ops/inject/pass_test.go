package inject

import (
	"strings"
	"testing"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/vault"
)

func TestPassAndChildEnv(t *testing.T) {
	environ := []string{"HOME=/h", "NODE_ENV=production", "CI=true", "AWS_SECRET_ACCESS_KEY=s", "GITHUB_SHA=abc", "GITHUB_TOKEN=t", "ARCA_ENV=prod"}
	injections := []Injection{{Name: "DB", Ref: "arca://app/db"}}
	passed, err := Pass(environ, []string{"NODE_ENV", "GITHUB_*", "CI"}, injections)
	if err != nil {
		t.Fatal(err)
	}
	vars := []Materialized{{Name: "DB", Value: vault.NewSecret([]byte("v"))}}
	got := strings.Join(ChildEnv(environ, passed, vars), " ")
	if want := "HOME=/h NODE_ENV=production CI=true GITHUB_SHA=abc DB=v"; got != want {
		t.Fatalf("ChildEnv = %q, want %q", got, want)
	}
	printed := WithPassed(vars, passed)
	var names []string
	for _, m := range printed {
		names = append(names, m.Name)
		if m.Name != "DB" && !m.Literal {
			t.Errorf("passed %s is not a literal: it would be masked", m.Name)
		}
	}
	if strings.Join(names, ",") != "CI,DB,GITHUB_SHA,NODE_ENV" {
		t.Fatalf("WithPassed names = %v", names)
	}
}

// Every refusal is bad_request (exit 2) and names its rule.
func TestPassRefusals(t *testing.T) {
	environ := []string{"DB_PASSWORD=arca://app/db", "DB_HOST=h", "TOKEN=x"}
	for _, tc := range []struct {
		patterns   []string
		injections []Injection
		want       string
	}{
		{[]string{"LD_PRELOAD"}, nil, "pass LD_PRELOAD: the dynamic loader reads it when a program starts, so it is never passed (rule: start-up variables)"},
		{[]string{"ARCA_X"}, nil, "(rule: ARCA_* names)"},
		{[]string{"*"}, nil, "(rule: no bare *)"},
		{[]string{"AWS_*"}, nil, "(rule: cloud credentials)"},
		{[]string{"DB_*"}, RefsInEnviron(environ), "pass DB_*: DB_PASSWORD is also injected (a --secret, a --file, an env file's line); a variable is passed or injected, not both (rule: one source per name)"},
		// Refused whether arca's environment sets the variable or not.
		{[]string{"UNSET_HERE"}, []Injection{{Name: "UNSET_HERE", Ref: "arca://app/t"}}, "pass UNSET_HERE: UNSET_HERE is also injected"},
		{[]string{"TOKEN"}, []Injection{{Name: "TOKEN", Ref: "arca://app/t"}}, "pass TOKEN: TOKEN is also injected"},
		{make([]string, 129), nil, "129 patterns to pass: at most 128"},
	} {
		_, err := Pass(environ, tc.patterns, tc.injections)
		if err == nil || ops.CodeOf(err) != manifest.BadRequest || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Pass(%.40q) = %v, want bad_request %q", tc.patterns, err, tc.want)
		}
	}
}
