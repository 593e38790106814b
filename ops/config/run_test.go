package config

import (
	"strings"
	"testing"
)

func TestRunPass(t *testing.T) {
	c, err := Parse([]byte("[run]\npass = [\"NODE_ENV\", \"CI\", \"GITHUB_*\"]\n"), "arca.toml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.Run.Pass, ",") != "NODE_ENV,CI,GITHUB_*" {
		t.Fatalf("run.pass = %q", c.Run.Pass)
	}
	if c, err := Parse(nil, "arca.toml", nil); err != nil || c.Run.Pass != nil {
		t.Fatalf("no [run]: %v %q", err, c.Run.Pass)
	}
}

// Every refusal names the file and the entry, and the rule.
func TestRunPassRefused(t *testing.T) {
	many := strings.Repeat(`"A",`, 65)
	for _, tc := range []struct{ toml, want string }{
		{`pass = ["CI", "LD_PRELOAD"]`, "arca.toml: run.pass[1]: LD_PRELOAD: the dynamic loader reads it when a program starts, so it is never passed (rule: start-up variables)"},
		{`pass = ["ARCA_ENV"]`, "arca.toml: run.pass[0]: ARCA_ENV: ARCA_* names are arca's own settings and are never passed (rule: ARCA_* names)"},
		{`pass = ["AWS_*"]`, "run.pass[0]: AWS_*: every name it matches is a cloud or CI credential, passed only when named exactly (rule: cloud credentials)"},
		{`pass = ["*"]`, "run.pass[0]: *: a bare * would pass all of arca's environment"},
		{`pass = ["A B"]`, `run.pass[0]: "A B": not a variable name`},
		{"pass = [" + many + "]", "run.pass: 65 entries: at most 64"},
		{`pass = "CI"`, `key "run.pass": wrong type`},
		{`passs = ["CI"]`, `unknown key "run.passs"`},
	} {
		_, err := Parse([]byte("[run]\n"+tc.toml+"\n"), "arca.toml", nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.toml, err, tc.want)
		}
	}
}
