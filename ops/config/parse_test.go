package config

import (
	"os"
	"slices"
	"strings"
	"testing"
)

func TestParseErrors(t *testing.T) {
	const vaults = "[vaults.local]\nkind = \"file\"\n"
	tests := []struct {
		name, doc string
		parts     []string
	}{
		// Decoding: unknown keys, syntax and types name file, line and key.
		{"unknown top-level key", "default_env = \"default\"\nbogus = true\n",
			[]string{`arca.toml:2: unknown key "bogus"`}},
		{"unknown pdp key", "[serve]\n\n[serve.pdp]\nexce = \"x\"\n",
			[]string{`arca.toml:4: unknown key "serve.pdp.exce"`}},
		{"unknown env key", "[envs.dev]\nvualt = \"local\"\n",
			[]string{`arca.toml:2: unknown key "envs.dev.vualt"`}},
		{"unknown rule key", "[[guardrails.rule]]\nreason = \"r\"\n[[guardrails.rule]]\nreason = \"r\"\nopz = [\"get\"]\n",
			[]string{`arca.toml:5: unknown key "guardrails.rule.opz"`}},
		{"two unknown keys", "a = 1\nb = 2\n",
			[]string{`arca.toml:1: unknown key "a" (and 1 more unknown key)`}},
		{"several unknown keys", "a = 1\nb = 2\nc = 3\n",
			[]string{`arca.toml:1: unknown key "a" (and 2 more unknown keys)`}},
		{"syntax error", "default_env = = 1\n", []string{"arca.toml:1: "}},
		{"duplicate key", "default_env = \"a\"\ndefault_env = \"b\"\n", []string{"arca.toml:2:", "already defined"}},
		{"wrong type", "\ndefault_env = 5\n", []string{`arca.toml:2: key "default_env": wrong type (got a TOML integer)`}},
		{"wrong table type", "[envs]\ndev = 3\n", []string{`arca.toml:2: key "envs.dev": wrong type (got a TOML integer)`}},
		{"invalid UTF-8", "default_env = \"\xff\"\n", []string{"arca.toml:1:"}},
		// Envs.
		{"invalid env name", vaults + "[envs.\"-dev\"]\nvault = \"local\"\n",
			[]string{`arca.toml: envs."-dev": invalid env name: must start with a letter or digit`}},
		{"env name with control character", vaults + "[envs.\"a\\u001bb\"]\nvault = \"local\"\n",
			[]string{`envs."a\x1bb": invalid env name: has a control character`}},
		{"env without vault", vaults + "[envs.dev]\n", []string{"arca.toml: envs.dev.vault is required"}},
		{"env naming no vault", vaults + "[envs.dev]\nvault = \"team\"\n",
			[]string{`arca.toml: envs.dev.vault: no vault "team" is configured (configured: local)`}},
		{"env with no vaults at all", "[envs.dev]\nvault = \"team\"\n",
			[]string{`envs.dev.vault: no vault "team" is configured (none configured)`}},
		// default_env.
		{"default_env not configured", "default_env = \"prod\"\n" + vaults + "[envs.dev]\nvault = \"local\"\n",
			[]string{`arca.toml: default_env "prod" is not a configured env (configured: dev)`}},
		{"default_env without envs", "default_env = \"prod\"\n",
			[]string{`default_env "prod" is not a configured env (configured: default)`}},
		{"default_env invalid", "default_env = \"a b\"\n",
			[]string{`arca.toml: default_env "a b": has a character outside [A-Za-z0-9._-]: ' '`}},
		// Vaults.
		{"invalid vault name", "[vaults.\"..\"]\nkind = \"file\"\n",
			[]string{`arca.toml: vaults."..": invalid vault name: must start with a letter or digit`}},
		{"vault without kind", "[vaults.local]\npath = \"x\"\n", []string{"arca.toml: vaults.local.kind is required (file or etcd)"}},
		{"vault of unknown kind", "[vaults.local]\nkind = \"s3\"\n", []string{`arca.toml: vaults.local.kind "s3" is not file or etcd`}},
		{"file vault with endpoints", "[vaults.local]\nkind = \"file\"\nendpoints = [\"h:1\"]\n",
			[]string{"arca.toml: vaults.local.endpoints is only for kind etcd"}},
		{"file vault with empty endpoints", "[vaults.local]\nkind = \"file\"\nendpoints = []\n",
			[]string{"vaults.local.endpoints is only for kind etcd"}},
		{"file vault with prefix", "[vaults.local]\nkind = \"file\"\nprefix = \"/a/\"\n",
			[]string{"arca.toml: vaults.local.prefix is only for kind etcd"}},
		{"etcd vault without endpoints", "[vaults.team]\nkind = \"etcd\"\nprefix = \"/a/\"\n",
			[]string{"arca.toml: vaults.team.endpoints is required for kind etcd"}},
		{"etcd vault without prefix", "[vaults.team]\nkind = \"etcd\"\nendpoints = [\"h:1\"]\n",
			[]string{"arca.toml: vaults.team.prefix is required for kind etcd"}},
		{"etcd vault with path", "[vaults.team]\nkind = \"etcd\"\nendpoints = [\"h:1\"]\nprefix = \"/a/\"\npath = \"x\"\n",
			[]string{"arca.toml: vaults.team.path is only for kind file"}},
		{"etcd vault with empty endpoint", "[vaults.team]\nkind = \"etcd\"\nendpoints = [\"h:1\", \"\"]\nprefix = \"/a/\"\n",
			[]string{"arca.toml: vaults.team.endpoints has an empty entry"}},
		{"file vault with username", "[vaults.local]\nkind = \"file\"\nusername = \"u\"\n",
			[]string{"arca.toml: vaults.local.username is only for kind etcd"}},
		{"file vault with tls_ca", "[vaults.local]\nkind = \"file\"\ntls_ca = \"ca.pem\"\n",
			[]string{"arca.toml: vaults.local.tls_ca is only for kind etcd"}},
		{"file vault with timeout_ms", "[vaults.local]\nkind = \"file\"\ntimeout_ms = 10\n",
			[]string{"arca.toml: vaults.local.timeout_ms is only for kind etcd"}},
		{"file vault with timeout_ms zero", "[vaults.local]\nkind = \"file\"\ntimeout_ms = 0\n",
			[]string{"arca.toml: vaults.local.timeout_ms is only for kind etcd"}},
		{"etcd vault with 33 endpoints", "[vaults.team]\nkind = \"etcd\"\nprefix = \"/a/\"\nendpoints = [" + strings.Repeat(`"h:1",`, 33) + "]\n",
			[]string{"arca.toml: vaults.team.endpoints lists 33 members, at most 32"}},
		{"etcd endpoint too long", "[vaults.team]\nkind = \"etcd\"\nprefix = \"/a/\"\nendpoints = [\"" + strings.Repeat("h", 257) + "\"]\n",
			[]string{"arca.toml: vaults.team.endpoints has an entry that is empty, longer than 256 bytes or not printable"}},
		{"etcd endpoint with a space", "[vaults.team]\nkind = \"etcd\"\nprefix = \"/a/\"\nendpoints = [\"h :1\"]\n",
			[]string{"vaults.team.endpoints has an entry that is empty, longer than 256 bytes or not printable"}},
		{"etcd prefix without leading slash", "[vaults.team]\nkind = \"etcd\"\nendpoints = [\"h:1\"]\nprefix = \"a/\"\n",
			[]string{`arca.toml: vaults.team.prefix "a/" must start and end with / and be at most 256 printable bytes`}},
		{"etcd prefix without trailing slash", "[vaults.team]\nkind = \"etcd\"\nendpoints = [\"h:1\"]\nprefix = \"/a\"\n",
			[]string{`vaults.team.prefix "/a" must start and end with /`}},
		{"etcd prefix too long", "[vaults.team]\nkind = \"etcd\"\nendpoints = [\"h:1\"]\nprefix = \"/" + strings.Repeat("p", 256) + "/\"\n",
			[]string{"must start and end with / and be at most 256 printable bytes"}},
		{"etcd prefix with a control byte", "[vaults.team]\nkind = \"etcd\"\nendpoints = [\"h:1\"]\nprefix = \"/a\\tb/\"\n",
			[]string{"must start and end with / and be at most 256 printable bytes"}},
		{"etcd password and password_file", "[vaults.team]\nkind = \"etcd\"\nendpoints = [\"h:1\"]\nprefix = \"/a/\"\nusername = \"u\"\npassword = \"p\"\npassword_file = \"f\"\n",
			[]string{"arca.toml: vaults.team.password and password_file are both set; give one"}},
		{"etcd username without password", "[vaults.team]\nkind = \"etcd\"\nendpoints = [\"h:1\"]\nprefix = \"/a/\"\nusername = \"u\"\n",
			[]string{"arca.toml: vaults.team.username and a password (password or password_file) go together"}},
		{"etcd password without username", "[vaults.team]\nkind = \"etcd\"\nendpoints = [\"h:1\"]\nprefix = \"/a/\"\npassword_file = \"f\"\n",
			[]string{"vaults.team.username and a password (password or password_file) go together"}},
		{"etcd tls_cert without tls_key", "[vaults.team]\nkind = \"etcd\"\nendpoints = [\"h:1\"]\nprefix = \"/a/\"\ntls_cert = \"c.pem\"\n",
			[]string{"arca.toml: vaults.team.tls_cert and tls_key go together"}},
		{"vault with empty recipient", "[vaults.local]\nkind = \"file\"\nrecipients = [\"\"]\n",
			[]string{"arca.toml: vaults.local.recipients has an empty entry"}},
		// Guardrails.
		{"rule without reason", "[[guardrails.rule]]\nenv = \"prod\"\n",
			[]string{"arca.toml: guardrails.rule #1: reason is required"}},
		{"rule with blank reason", "[[guardrails.rule]]\nreason = \"r\"\n[[guardrails.rule]]\nreason = \"  \"\n",
			[]string{"arca.toml: guardrails.rule #2: reason is required"}},
		{"rule with empty ops", "[[guardrails.rule]]\nreason = \"r\"\nops = []\n",
			[]string{"arca.toml: guardrails.rule #1: ops is empty (omit it to mean every op)"}},
		{"rule with unknown op", "[[guardrails.rule]]\nreason = \"r\"\nops = [\"get\", \"read\"]\n",
			[]string{`arca.toml: guardrails.rule #1: ops: unknown op "read" (want get, put, rm, rotate, list, check, http, exec, history, rollback, undelete, destroy, changes)`}},
		{"rule with meta op", "[[guardrails.rule]]\nreason = \"r\"\nops = [\"manifest\"]\n",
			[]string{`guardrails.rule #1: ops: unknown op "manifest"`}},
		{"rule with bad env glob", "[[guardrails.rule]]\nreason = \"r\"\nenv = \"prod[\"\n",
			[]string{`arca.toml: guardrails.rule #1: env: invalid glob "prod["`}},
		{"rule with bad ref glob", "[[guardrails.rule]]\nreason = \"r\"\nref = \"billing/\\\\\"\n",
			[]string{`arca.toml: guardrails.rule #1: ref: invalid glob "billing/\\"`}},
		{"rule with bad actor glob", "[[guardrails.rule]]\nreason = \"r\"\nactor = \"[]a]\"\n",
			[]string{`arca.toml: guardrails.rule #1: actor: invalid glob "[]a]": empty class []`}},
		{"rule with unclosed class", "[[guardrails.rule]]\nreason = \"r\"\nenv = \"prod[\"\n",
			[]string{`arca.toml: guardrails.rule #1: env: invalid glob "prod[": [ without ]`}},
		{"rule with escape", "[[guardrails.rule]]\nreason = \"r\"\nref = 'billing/\\*'\n",
			[]string{`arca.toml: guardrails.rule #1: ref: invalid glob "billing/\\*": \ is not allowed (there are no escapes)`}},
		{"rule with reversed range", "[[guardrails.rule]]\nreason = \"r\"\nactor = \"agent:[z-a]\"\n",
			[]string{`arca.toml: guardrails.rule #1: actor: invalid glob "agent:[z-a]": range z-a runs from high to low`}},
		{"rule with stray bracket", "[[guardrails.rule]]\nreason = \"r\"\nref = \"a]/b\"\n",
			[]string{`arca.toml: guardrails.rule #1: ref: invalid glob "a]/b": ] without [`}},
		{"rule with bad ops glob", "[[guardrails.rule]]\nreason = \"r\"\nops = [\"get\", \"r[\"]\n",
			[]string{`arca.toml: guardrails.rule #1: ops: invalid glob "r[": [ without ]`}},
		{"rule with ops glob that matches no op", "[[guardrails.rule]]\nreason = \"r\"\nops = [\"gte*\"]\n",
			[]string{`arca.toml: guardrails.rule #1: ops: glob "gte*" matches no op (want get, put, rm, rotate, list, check, http, exec, history, rollback, undelete, destroy, changes)`}},
		{"rule with ops glob that matches only a meta-op", "[[guardrails.rule]]\nreason = \"r\"\nops = [\"man*\"]\n",
			[]string{`ops: glob "man*" matches no op`}},
		// PDP. (Every timeout_ms: timeout_test.go.)
		{"pdp without exec", "[serve.pdp]\nallow_on_error = true\n",
			[]string{"arca.toml: serve.pdp.exec or serve.pdp.url is required when [serve.pdp] is present"}},
		{"pdp with blank exec", "[serve.pdp]\nexec = \" \"\n", []string{"serve.pdp.exec or serve.pdp.url is required"}},
		{"pdp with exec and url", "[serve.pdp]\nexec = \"x\"\nurl = \"http://127.0.0.1:8181/v1/data/a\"\napi = \"opa\"\n",
			[]string{"arca.toml: serve.pdp.exec and serve.pdp.url are both set; give one"}},
		{"pdp with an unknown mode", "[serve.pdp]\nexec = \"x\"\nmode = \"daemon\"\n",
			[]string{`arca.toml: serve.pdp.mode "daemon" is not spawn or persistent`}},
		{"pdp mode is a string", "[serve.pdp]\nexec = \"x\"\nmode = 1\n", []string{`key "serve.pdp.mode": wrong type`}},
		{"pdp with mode and url", "[serve.pdp]\nurl = \"http://127.0.0.1:8181/v1/data/a\"\napi = \"opa\"\nmode = \"persistent\"\n",
			[]string{"arca.toml: serve.pdp.mode is only for exec"}},
		{"pdp with api and exec", "[serve.pdp]\nexec = \"x\"\napi = \"opa\"\n",
			[]string{"arca.toml: serve.pdp.api and serve.pdp.http_path are only for url"}},
		{"pdp with http_path and exec", "[serve.pdp]\nexec = \"x\"\nhttp_path = \"/v1/data/a\"\n",
			[]string{"serve.pdp.api and serve.pdp.http_path are only for url"}},
		{"pdp url without api", "[serve.pdp]\nurl = \"http://127.0.0.1:8181/v1/data/a\"\n",
			[]string{"arca.toml: serve.pdp.api is required with url (opa or authzen)"}},
		{"pdp url with an unknown api", "[serve.pdp]\nurl = \"http://127.0.0.1:8181/v1/data/a\"\napi = \"xacml\"\n",
			[]string{`arca.toml: serve.pdp.api "xacml" is not opa or authzen`}},
		{"pdp url not on loopback", "[serve.pdp]\nurl = \"http://10.1.2.3:8181/v1/data/a\"\napi = \"opa\"\n",
			[]string{"arca.toml: serve.pdp.url host must be a loopback address"}},
		{"pdp url on a public name", "[serve.pdp]\nurl = \"http://opa.example.com/v1/data/a\"\napi = \"opa\"\n",
			[]string{"serve.pdp.url host must be a loopback address"}},
		{"pdp url https", "[serve.pdp]\nurl = \"https://127.0.0.1/v1/data/a\"\napi = \"opa\"\n",
			[]string{"serve.pdp.url must be http://"}},
		{"pdp opa url without a path", "[serve.pdp]\nurl = \"http://127.0.0.1:8181\"\napi = \"opa\"\n",
			[]string{"serve.pdp.url needs the policy's path for api opa"}},
		{"pdp http_path with an http url", "[serve.pdp]\nurl = \"http://127.0.0.1/v1/data/a\"\napi = \"opa\"\nhttp_path = \"/v1/data/b\"\n",
			[]string{"serve.pdp.http_path is only for a unix: url"}},
		{"pdp unix url relative", "[serve.pdp]\nurl = \"unix:opa.sock\"\napi = \"authzen\"\n",
			[]string{"serve.pdp.url unix:<socket> needs an absolute socket path"}},
		{"pdp unix opa url without http_path", "[serve.pdp]\nurl = \"unix:/run/opa.sock\"\napi = \"opa\"\n",
			[]string{"serve.pdp.http_path needs the policy's path for api opa"}},
		{"pdp url with a bad timeout", "[serve.pdp]\nurl = \"unix:/run/az.sock\"\napi = \"authzen\"\ntimeout_ms = 0\n",
			[]string{"serve.pdp.timeout_ms"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(tc.doc), "arca.toml", envOf(nil))
			if err == nil {
				t.Fatalf("Parse accepted it: %+v", c)
			}
			wantErr(t, err, tc.parts...)
		})
	}
}

// readSketch is testdata/sketch.toml: a config with every section, file
// and etcd vaults, a guardrail and a PDP (ops's routing tests read it too).
func readSketch(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile("testdata/sketch.toml")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParseSketch(t *testing.T) {
	sketch := readSketch(t)
	c, err := Parse([]byte(sketch), "arca.toml", envOf(map[string]string{"HOME": "/h"}))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if c.DefaultEnv != "dev" || c.Path != "" || c.Origin != OriginNone {
		t.Errorf("DefaultEnv, Path, Origin = %q, %q, %v", c.DefaultEnv, c.Path, c.Origin)
	}
	if got := c.EnvNames(); !slices.Equal(got, []string{"dev", "prod"}) {
		t.Errorf("EnvNames() = %v", got)
	}
	want := Rule{Env: "prod", Ops: []string{"get"}, Ref: "billing/*", Actor: "agent:*", Reason: "no prod reads"}
	if len(c.Guardrails.Rules) != 1 || !rulesEqual(c.Guardrails.Rules[0], want) {
		t.Errorf("rules = %+v", c.Guardrails.Rules)
	}
	if p := c.Serve.PDP; p == nil || *p != (PDPConfig{Exec: "peregrin policy decide", TimeoutMS: 250}) {
		t.Errorf("PDP = %+v", p)
	}
	if got, err := c.AuditFile(); err != nil || got != "/h/.local/state/arca/audit.log" {
		t.Errorf("AuditFile() = %q, %v", got, err)
	}
}

func rulesEqual(a, b Rule) bool {
	return a.Env == b.Env && slices.Equal(a.Ops, b.Ops) && a.Ref == b.Ref && a.Actor == b.Actor && a.Reason == b.Reason
}

func TestParsePDP(t *testing.T) {
	tests := []struct {
		name, doc string
		want      *PDPConfig
	}{
		{"no table", "", nil},
		{"timeout omitted", "[serve.pdp]\nexec = \"x\"\n", &PDPConfig{Exec: "x", TimeoutMS: 5000}},
		{"timeout at minimum", "[serve.pdp]\nexec = \"x\"\ntimeout_ms = 1\n", &PDPConfig{Exec: "x", TimeoutMS: 1}},
		{"timeout at maximum", "[serve.pdp]\nexec = \"x\"\ntimeout_ms = 600000\n", &PDPConfig{Exec: "x", TimeoutMS: 600000}},
		{"allow on error", "[serve.pdp]\nexec = \"x\"\nallow_on_error = true\n", &PDPConfig{Exec: "x", AllowOnError: true, TimeoutMS: 5000}},
		{"mode spawn", "[serve.pdp]\nexec = \"x\"\nmode = \"spawn\"\n", &PDPConfig{Exec: "x", Mode: "spawn", TimeoutMS: 5000}},
		{"mode persistent", "[serve.pdp]\nexec = \"x\"\nmode = \"persistent\"\n", &PDPConfig{Exec: "x", Mode: "persistent", TimeoutMS: 5000}},
		{"opa url", "[serve.pdp]\nurl = \"http://127.0.0.1:8181/v1/data/arca/allow\"\napi = \"opa\"\ntimeout_ms = 200\n",
			&PDPConfig{URL: "http://127.0.0.1:8181/v1/data/arca/allow", API: "opa", TimeoutMS: 200}},
		{"authzen url on localhost", "[serve.pdp]\nurl = \"http://localhost:8080\"\napi = \"authzen\"\nallow_on_error = true\n",
			&PDPConfig{URL: "http://localhost:8080", API: "authzen", AllowOnError: true, TimeoutMS: 5000}},
		{"opa on a unix socket", "[serve.pdp]\nurl = \"unix:/run/opa/opa.sock\"\nhttp_path = \"/v1/data/arca/decision\"\napi = \"opa\"\n",
			&PDPConfig{URL: "unix:/run/opa/opa.sock", HTTPPath: "/v1/data/arca/decision", API: "opa", TimeoutMS: 5000}},
		{"authzen on a unix socket", "[serve.pdp]\nurl = \"unix:/run/az.sock\"\napi = \"authzen\"\n",
			&PDPConfig{URL: "unix:/run/az.sock", API: "authzen", TimeoutMS: 5000}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(tc.doc), "arca.toml", envOf(nil))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			got := c.Serve.PDP
			if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
				t.Fatalf("PDP = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// Every glob the language has is accepted in the field it may appear in.
func TestParseGlobs(t *testing.T) {
	const doc = `
[[guardrails.rule]]
env = "qa-[0-9]*"
ops = ["r*", "get"]
ref = "*/card?"
actor = "[!h]*:*"
reason = "globs"
`
	c, err := Parse([]byte(doc), "arca.toml", envOf(nil))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	want := Rule{Env: "qa-[0-9]*", Ops: []string{"r*", "get"}, Ref: "*/card?", Actor: "[!h]*:*", Reason: "globs"}
	if len(c.Guardrails.Rules) != 1 || !rulesEqual(c.Guardrails.Rules[0], want) {
		t.Errorf("rules = %+v", c.Guardrails.Rules)
	}
}
