package ops

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/manifest"
)

// envOf returns a getenv over m.
func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// wantError fails unless err is an *Error with code whose message contains
// every part.
func wantError(t *testing.T, err error, code manifest.Code, parts ...string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %#v, want an *ops.Error", err)
	}
	if e.Code != code {
		t.Fatalf("code = %s, want %s (message %q)", e.Code, code, e.Msg)
	}
	for _, p := range parts {
		if !strings.Contains(e.Msg, p) {
			t.Fatalf("message %q, want it to contain %q", e.Msg, p)
		}
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// auditDoc is a config whose only trace is its audit file, naming it.
func auditDoc(label string) string { return "[audit]\nfile = \"/" + label + ".log\"\n" }

func TestLoadConfigFinds(t *testing.T) {
	// Layout under a temp root: pinned.toml, env.toml, wd/arca.toml,
	// xdg/arca/arca.toml, home/.config/arca/arca.toml.
	tests := []struct {
		name    string
		files   []string // which of: pinned env implicit xdg home
		flag    bool
		env     map[string]string // values are relative to the root
		origin  Origin
		label   string // the loaded file's audit label, "" when none
		wantRel string // Path relative to the root
	}{
		{"flag beats everything", []string{"pinned", "env", "implicit", "xdg", "home"}, true,
			map[string]string{"ARCA_CONFIG": "env.toml", "XDG_CONFIG_HOME": "xdg"}, OriginPinned, "pinned", "pinned.toml"},
		{"ARCA_CONFIG beats implicit", []string{"env", "implicit", "xdg", "home"}, false,
			map[string]string{"ARCA_CONFIG": "env.toml", "XDG_CONFIG_HOME": "xdg"}, OriginPinned, "env", "env.toml"},
		{"implicit beats user", []string{"implicit", "xdg", "home"}, false,
			map[string]string{"XDG_CONFIG_HOME": "xdg"}, OriginImplicit, "implicit", "wd/arca.toml"},
		{"user under XDG_CONFIG_HOME", []string{"xdg", "home"}, false,
			map[string]string{"XDG_CONFIG_HOME": "xdg"}, OriginUser, "xdg", "xdg/arca/arca.toml"},
		{"user under HOME by default", []string{"xdg", "home"}, false,
			nil, OriginUser, "home", "home/.config/arca/arca.toml"},
		{"relative XDG_CONFIG_HOME is ignored", []string{"home"}, false,
			map[string]string{"XDG_CONFIG_HOME": "relative/xdg"}, OriginUser, "home", "home/.config/arca/arca.toml"},
		{"none found", nil, false, nil, OriginNone, "", ""},
		{"none found without HOME", nil, false, map[string]string{"HOME": ""}, OriginNone, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			where := map[string]string{
				"pinned": "pinned.toml", "env": "env.toml", "implicit": "wd/arca.toml",
				"xdg": "xdg/arca/arca.toml", "home": "home/.config/arca/arca.toml",
			}
			for _, f := range tc.files {
				writeFile(t, filepath.Join(root, where[f]), auditDoc(f))
			}
			if err := os.MkdirAll(filepath.Join(root, "wd"), 0o700); err != nil {
				t.Fatal(err)
			}
			t.Chdir(filepath.Join(root, "wd"))
			env := map[string]string{"HOME": filepath.Join(root, "home")}
			for k, v := range tc.env {
				switch {
				case v == "" || strings.HasPrefix(v, "relative/"):
					env[k] = v
				default:
					env[k] = filepath.Join(root, v)
				}
			}
			flag := ""
			if tc.flag {
				flag = filepath.Join(root, "pinned.toml")
			}
			c, err := LoadConfig(flag, envOf(env))
			if err != nil {
				t.Fatalf("LoadConfig: %v", err)
			}
			if c.Origin != tc.origin {
				t.Errorf("Origin = %v, want %v", c.Origin, tc.origin)
			}
			wantPath := ""
			if tc.wantRel != "" {
				wantPath = filepath.Join(root, tc.wantRel)
			}
			if c.Path != wantPath {
				t.Errorf("Path = %q, want %q", c.Path, wantPath)
			}
			wantAudit := ""
			if tc.label != "" {
				wantAudit = "/" + tc.label + ".log"
			}
			if c.Audit.File != wantAudit {
				t.Errorf("Audit.File = %q, want %q", c.Audit.File, wantAudit)
			}
			if got := c.EnvNames(); !slices.Equal(got, []string{"default"}) {
				t.Errorf("EnvNames() = %v, want [default]", got)
			}
		})
	}
}

func TestLoadConfigFails(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, root string) (flag string, env map[string]string)
		parts []string
	}{
		{"missing --config does not fall through", func(t *testing.T, root string) (string, map[string]string) {
			writeFile(t, filepath.Join(root, "wd", "arca.toml"), "")
			return filepath.Join(root, "nope.toml"), nil
		}, []string{"nope.toml", "(from --config) does not exist"}},
		{"missing ARCA_CONFIG does not fall through", func(t *testing.T, root string) (string, map[string]string) {
			writeFile(t, filepath.Join(root, "wd", "arca.toml"), "")
			return "", map[string]string{"ARCA_CONFIG": filepath.Join(root, "nope.toml")}
		}, []string{"nope.toml", "(from ARCA_CONFIG) does not exist"}},
		{"~/ in ARCA_CONFIG without HOME", func(t *testing.T, root string) (string, map[string]string) {
			return "", map[string]string{"ARCA_CONFIG": "~/arca.toml", "HOME": ""}
		}, []string{"HOME is not set", "ARCA_CONFIG"}},
		{"invalid implicit config does not fall through", func(t *testing.T, root string) (string, map[string]string) {
			writeFile(t, filepath.Join(root, "wd", "arca.toml"), "bogus = 1\n")
			writeFile(t, filepath.Join(root, "home", ".config", "arca", "arca.toml"), "")
			return "", nil
		}, []string{"arca.toml:1:", `unknown key "bogus"`}},
		{"implicit config is a directory", func(t *testing.T, root string) (string, map[string]string) {
			if err := os.MkdirAll(filepath.Join(root, "wd", "arca.toml"), 0o700); err != nil {
				t.Fatal(err)
			}
			return "", nil
		}, []string{"arca.toml", "is a directory"}},
		{"invalid user config", func(t *testing.T, root string) (string, map[string]string) {
			writeFile(t, filepath.Join(root, "home", ".config", "arca", "arca.toml"), "[envs.dev]\n")
			return "", nil
		}, []string{"arca.toml", "envs.dev.vault is required"}},
		{"config over the cap", func(t *testing.T, root string) (string, map[string]string) {
			p := filepath.Join(root, "big.toml")
			writeFile(t, p, "#"+strings.Repeat(" ", manifest.MaxConfig))
			return p, nil
		}, []string{"big.toml", "larger than the 1048576-byte cap"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if err := os.MkdirAll(filepath.Join(root, "wd"), 0o700); err != nil {
				t.Fatal(err)
			}
			flag, env := tc.setup(t, root)
			if env == nil {
				env = map[string]string{}
			}
			if _, ok := env["HOME"]; !ok {
				env["HOME"] = filepath.Join(root, "home")
			}
			t.Chdir(filepath.Join(root, "wd"))
			c, err := LoadConfig(flag, envOf(env))
			if err == nil {
				t.Fatalf("LoadConfig succeeded: %+v", c)
			}
			wantError(t, err, manifest.OpError, tc.parts...)
		})
	}
}

func TestLoadConfigPinnedDetails(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	writeFile(t, filepath.Join(home, "cfg", "arca.toml"), `
[vaults.default]
kind = "file"
path = "vaults/dev.vault"
identity = "keys/id.txt"
[audit]
file = "logs/audit.log"
`)
	c, err := LoadConfig("", envOf(map[string]string{"HOME": home, "ARCA_CONFIG": "~/cfg/arca.toml"}))
	if err != nil {
		t.Fatalf("LoadConfig: %v", err)
	}
	if want := filepath.Join(home, "cfg", "arca.toml"); c.Path != want || c.Origin != OriginPinned {
		t.Fatalf("Path, Origin = %q, %v; want %q, pinned", c.Path, c.Origin, want)
	}
	// Relative paths in a config file are relative to that file.
	_, v, err := c.VaultFor("default")
	if err != nil {
		t.Fatalf("VaultFor: %v", err)
	}
	if want := filepath.Join(home, "cfg", "vaults", "dev.vault"); v.Path != want {
		t.Errorf("vault path = %q, want %q", v.Path, want)
	}
	if want := filepath.Join(home, "cfg", "keys", "id.txt"); v.Identity != want {
		t.Errorf("identity = %q, want %q", v.Identity, want)
	}
	if got, _ := c.AuditFile(); got != filepath.Join(home, "cfg", "logs", "audit.log") {
		t.Errorf("AuditFile() = %q", got)
	}
	// Exactly the cap is accepted.
	p := filepath.Join(root, "cap.toml")
	writeFile(t, p, "#"+strings.Repeat(" ", manifest.MaxConfig-1))
	if _, err := LoadConfig(p, envOf(nil)); err != nil {
		t.Fatalf("a config of exactly the cap: %v", err)
	}
}

func TestParseConfigErrors(t *testing.T) {
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
		{"timeout overflows", "[serve.pdp]\nexec = \"x\"\ntimeout_ms = 99999999999999999999\n",
			[]string{`arca.toml:3: key "serve.pdp.timeout_ms"`}},
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
		{"etcd timeout too long", "[vaults.team]\nkind = \"etcd\"\nendpoints = [\"h:1\"]\nprefix = \"/a/\"\ntimeout_ms = 600001\n",
			[]string{"arca.toml: vaults.team.timeout_ms is 600001, must be 1..600000 (unset: 5000)"}},
		{"etcd timeout negative", "[vaults.team]\nkind = \"etcd\"\nendpoints = [\"h:1\"]\nprefix = \"/a/\"\ntimeout_ms = -1\n",
			[]string{"vaults.team.timeout_ms is -1, must be 1..600000"}},
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
			[]string{`arca.toml: guardrails.rule #1: ops: unknown op "read" (want get, put, rm, rotate, list, check)`}},
		{"rule with meta op", "[[guardrails.rule]]\nreason = \"r\"\nops = [\"manifest\"]\n",
			[]string{`guardrails.rule #1: ops: unknown op "manifest"`}},
		{"rule with bad env glob", "[[guardrails.rule]]\nreason = \"r\"\nenv = \"prod[\"\n",
			[]string{`arca.toml: guardrails.rule #1: env: invalid glob "prod["`}},
		{"rule with bad ref glob", "[[guardrails.rule]]\nreason = \"r\"\nref = \"billing/\\\\\"\n",
			[]string{`arca.toml: guardrails.rule #1: ref: invalid glob "billing/\\"`}},
		{"rule with bad actor glob", "[[guardrails.rule]]\nreason = \"r\"\nactor = \"[]a]\"\n",
			[]string{`arca.toml: guardrails.rule #1: actor: invalid glob "[]a]"`}},
		// PDP.
		{"pdp without exec", "[serve.pdp]\nallow_on_error = true\n",
			[]string{"arca.toml: serve.pdp.exec is required when [serve.pdp] is present"}},
		{"pdp with blank exec", "[serve.pdp]\nexec = \" \"\n", []string{"serve.pdp.exec is required"}},
		{"pdp timeout zero", "[serve.pdp]\nexec = \"x\"\ntimeout_ms = 0\n",
			[]string{"arca.toml: serve.pdp.timeout_ms 0 is out of range (1 to 600000)"}},
		{"pdp timeout negative", "[serve.pdp]\nexec = \"x\"\ntimeout_ms = -5\n",
			[]string{"serve.pdp.timeout_ms -5 is out of range"}},
		{"pdp timeout too long", "[serve.pdp]\nexec = \"x\"\ntimeout_ms = 600001\n",
			[]string{"serve.pdp.timeout_ms 600001 is out of range"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(tc.doc), "arca.toml", envOf(nil))
			if err == nil {
				t.Fatalf("ParseConfig accepted it: %+v", c)
			}
			wantError(t, err, manifest.OpError, tc.parts...)
		})
	}
}

const sketch = `
default_env = "dev"

[envs.dev]
vault = "local"

[envs.prod]
vault = "team"

[vaults.local]
kind = "file"
path = "~/.local/share/arca/dev.vault"
identity = "~/.config/arca/identity.txt"

[vaults.team]
kind = "etcd"
endpoints = ["127.0.0.1:2379"]
prefix = "/arca/prod/"
recipients = ["age1xyz"]

[[guardrails.rule]]
env = "prod"
ops = ["get"]
ref = "billing/*"
actor = "agent:*"
reason = "no prod reads"

[audit]
file = "~/.local/state/arca/audit.log"

[serve.pdp]
exec = "peregrin policy decide"
allow_on_error = false
timeout_ms = 250
`

func TestParseConfigSketch(t *testing.T) {
	c, err := ParseConfig([]byte(sketch), "arca.toml", envOf(map[string]string{"HOME": "/h"}))
	if err != nil {
		t.Fatalf("ParseConfig: %v", err)
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

func TestParseConfigPDP(t *testing.T) {
	tests := []struct {
		name, doc string
		want      *PDPConfig
	}{
		{"no table", "", nil},
		{"timeout omitted", "[serve.pdp]\nexec = \"x\"\n", &PDPConfig{Exec: "x", TimeoutMS: 5000}},
		{"timeout at minimum", "[serve.pdp]\nexec = \"x\"\ntimeout_ms = 1\n", &PDPConfig{Exec: "x", TimeoutMS: 1}},
		{"timeout at maximum", "[serve.pdp]\nexec = \"x\"\ntimeout_ms = 600000\n", &PDPConfig{Exec: "x", TimeoutMS: 600000}},
		{"allow on error", "[serve.pdp]\nexec = \"x\"\nallow_on_error = true\n", &PDPConfig{Exec: "x", AllowOnError: true, TimeoutMS: 5000}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(tc.doc), "arca.toml", envOf(nil))
			if err != nil {
				t.Fatalf("ParseConfig: %v", err)
			}
			got := c.Serve.PDP
			if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
				t.Fatalf("PDP = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestResolveEnv(t *testing.T) {
	const envs = "[vaults.v]\nkind = \"file\"\n[envs.dev]\nvault = \"v\"\n[envs.prod]\nvault = \"v\"\n[envs.default]\nvault = \"v\"\n"
	tests := []struct {
		name, doc     string
		pin, req, ctx string
		want          string
	}{
		{"no config: default", "", "", "", "", "default"},
		{"no config: explicit default", "", "", "default", "", "default"},
		{"pin wins", "default_env = \"dev\"\n" + envs, "prod", "dev", "dev", "prod"},
		{"request env next", "default_env = \"dev\"\n" + envs, "", "prod", "dev", "prod"},
		{"context next", "default_env = \"dev\"\n" + envs, "", "", "prod", "prod"},
		{"default_env next", "default_env = \"dev\"\n" + envs, "", "", "", "dev"},
		{"then default", envs, "", "", "", "default"},
		{"default_env default without envs", "default_env = \"default\"\n", "", "", "", "default"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(tc.doc), "arca.toml", envOf(nil))
			if err != nil {
				t.Fatalf("ParseConfig: %v", err)
			}
			got, err := c.ResolveEnv(tc.pin, tc.req, tc.ctx)
			if err != nil || got != tc.want {
				t.Fatalf("ResolveEnv = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestResolveEnvFails(t *testing.T) {
	const envs = "[vaults.v]\nkind = \"file\"\n[envs.dev]\nvault = \"v\"\n[envs.default]\nvault = \"v\"\n"
	long := strings.Repeat("x", 200)
	tests := []struct {
		name, doc     string
		pin, req, ctx string
		parts         []string
		notParts      []string
	}{
		{"unknown env lists names", envs, "", "prod", "", []string{`unknown env "prod" (configured: default, dev)`}, nil},
		{"no config knows only default", "", "", "", "dev", []string{`unknown env "dev" (configured: default)`}, nil},
		{"default missing from envs", "[vaults.v]\nkind = \"file\"\n[envs.dev]\nvault = \"v\"\n", "", "", "",
			[]string{`unknown env "default" (configured: dev)`}, nil},
		{"pin not configured", envs, "prod", "dev", "", []string{`unknown env "prod"`}, nil},
		{"invalid env", envs, "", "a/b", "", []string{`invalid env "a/b": has a character outside [A-Za-z0-9._-]: '/'`}, nil},
		{"control characters quoted", envs, "", "a\x1b[2Jb", "", []string{`invalid env "a\x1b[2Jb": has a control character`}, []string{"\x1b"}},
		{"dot-dot", envs, "", "", "..", []string{`invalid env "..": must start with a letter or digit`}, nil},
		{"over-long env not echoed", envs, "", long, "", []string{"invalid env: is longer than 128 characters"}, []string{long}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(tc.doc), "arca.toml", envOf(nil))
			if err != nil {
				t.Fatalf("ParseConfig: %v", err)
			}
			got, err := c.ResolveEnv(tc.pin, tc.req, tc.ctx)
			if err == nil {
				t.Fatalf("ResolveEnv = %q, want an error", got)
			}
			wantError(t, err, manifest.BadRequest, tc.parts...)
			for _, p := range tc.notParts {
				if strings.Contains(err.Error(), p) {
					t.Fatalf("message %q contains %q", err.Error(), p)
				}
			}
		})
	}
}

func TestEnvNames(t *testing.T) {
	c, err := ParseConfig([]byte("[vaults.v]\nkind = \"file\"\n[envs.b]\nvault = \"v\"\n[envs.a]\nvault = \"v\"\n[envs.c]\nvault = \"v\"\n"), "arca.toml", envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	names := c.EnvNames()
	if !slices.Equal(names, []string{"a", "b", "c"}) {
		t.Fatalf("EnvNames() = %v", names)
	}
	names[0] = "mutated"
	if got := c.EnvNames(); got[0] != "a" {
		t.Fatalf("EnvNames() shares its slice: %v", got)
	}
	if got := (&Config{}).EnvNames(); !slices.Equal(got, []string{"default"}) {
		t.Fatalf("zero Config EnvNames() = %v", got)
	}
	if env, err := (&Config{}).ResolveEnv("", "", ""); err != nil || env != "default" {
		t.Fatalf("zero Config ResolveEnv = %q, %v", env, err)
	}
}

func TestVaultFor(t *testing.T) {
	xdg := map[string]string{
		"HOME": "/h", "XDG_CONFIG_HOME": "/cfg", "XDG_DATA_HOME": "/data", "XDG_STATE_HOME": "/state",
	}
	homeOnly := map[string]string{"HOME": "/h"}
	tests := []struct {
		name, doc, env string
		getenv         map[string]string
		vault          string
		want           VaultConfig
	}{
		{"no config, XDG dirs", "", "default", xdg, "default",
			VaultConfig{Kind: "file", Path: "/data/arca/default.vault", Identity: "/cfg/arca/identity.txt"}},
		{"no config, HOME dirs", "", "default", homeOnly, "default",
			VaultConfig{Kind: "file", Path: "/h/.local/share/arca/default.vault", Identity: "/h/.config/arca/identity.txt"}},
		{"relative XDG dirs are ignored", "", "default",
			map[string]string{"HOME": "/h", "XDG_CONFIG_HOME": "cfg", "XDG_DATA_HOME": "./data"}, "default",
			VaultConfig{Kind: "file", Path: "/h/.local/share/arca/default.vault", Identity: "/h/.config/arca/identity.txt"}},
		{"ARCA_IDENTITY overrides the default", "", "default",
			map[string]string{"HOME": "/h", "ARCA_IDENTITY": "/keys/me.txt"}, "default",
			VaultConfig{Kind: "file", Path: "/h/.local/share/arca/default.vault", Identity: "/keys/me.txt"}},
		{"~/ in ARCA_IDENTITY", "", "default",
			map[string]string{"HOME": "/h", "ARCA_IDENTITY": "~/me.txt"}, "default",
			VaultConfig{Kind: "file", Path: "/h/.local/share/arca/default.vault", Identity: "/h/me.txt"}},
		{"vault identity overrides ARCA_IDENTITY",
			"[vaults.default]\nkind = \"file\"\nidentity = \"/v/id.txt\"\n", "default",
			map[string]string{"HOME": "/h", "ARCA_IDENTITY": "/keys/me.txt"}, "default",
			VaultConfig{Kind: "file", Path: "/h/.local/share/arca/default.vault", Identity: "/v/id.txt"}},
		{"configured default vault without envs",
			"[vaults.default]\nkind = \"file\"\npath = \"~/vaults/mine.vault\"\n", "default", homeOnly, "default",
			VaultConfig{Kind: "file", Path: "/h/vaults/mine.vault", Identity: "/h/.config/arca/identity.txt"}},
		{"file vault path defaults to its name",
			"[vaults.local]\nkind = \"file\"\n[envs.dev]\nvault = \"local\"\n", "dev", xdg, "local",
			VaultConfig{Kind: "file", Path: "/data/arca/local.vault", Identity: "/cfg/arca/identity.txt"}},
		{"~/ expansion", sketch, "dev", homeOnly, "local",
			VaultConfig{Kind: "file", Path: "/h/.local/share/arca/dev.vault", Identity: "/h/.config/arca/identity.txt"}},
		{"relative path kept without a config file",
			"[vaults.local]\nkind = \"file\"\npath = \"rel.vault\"\n[envs.dev]\nvault = \"local\"\n", "dev", homeOnly, "local",
			VaultConfig{Kind: "file", Path: "rel.vault", Identity: "/h/.config/arca/identity.txt"}},
		{"etcd vault", sketch, "prod", xdg, "team",
			VaultConfig{Kind: "etcd", Identity: "/cfg/arca/identity.txt", Recipients: []string{"age1xyz"},
				Endpoints: []string{"127.0.0.1:2379"}, Prefix: "/arca/prod/"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(tc.doc), "arca.toml", envOf(tc.getenv))
			if err != nil {
				t.Fatalf("ParseConfig: %v", err)
			}
			name, v, err := c.VaultFor(tc.env)
			if err != nil {
				t.Fatalf("VaultFor: %v", err)
			}
			if name != tc.vault {
				t.Errorf("name = %q, want %q", name, tc.vault)
			}
			if !vaultsEqual(v, tc.want) {
				t.Errorf("vault = %+v, want %+v", v, tc.want)
			}
		})
	}
}

func vaultsEqual(a, b VaultConfig) bool {
	return a.Kind == b.Kind && a.Path == b.Path && a.Identity == b.Identity && a.Prefix == b.Prefix &&
		slices.Equal(a.Recipients, b.Recipients) && slices.Equal(a.Endpoints, b.Endpoints)
}

func TestVaultForDoesNotShareSlices(t *testing.T) {
	c, err := ParseConfig([]byte(sketch), "arca.toml", envOf(map[string]string{"HOME": "/h"}))
	if err != nil {
		t.Fatal(err)
	}
	_, v, _ := c.VaultFor("prod")
	v.Endpoints[0], v.Recipients[0] = "evil:1", "evil"
	_, v, _ = c.VaultFor("prod")
	if v.Endpoints[0] != "127.0.0.1:2379" || v.Recipients[0] != "age1xyz" {
		t.Fatalf("VaultFor shares the config's slices: %+v", v)
	}
}

func TestVaultForFails(t *testing.T) {
	tests := []struct {
		name, doc, env string
		getenv         map[string]string
		code           manifest.Code
		parts          []string
	}{
		{"unknown env", sketch, "staging", nil, manifest.BadRequest, []string{`unknown env "staging" (configured: dev, prod)`}},
		{"invalid env", sketch, "", nil, manifest.BadRequest, []string{"invalid env", "is empty"}},
		{"~/ path without HOME", sketch, "dev", nil, manifest.OpError,
			[]string{"HOME is not set", "vaults.local.path"}},
		{"default path without HOME", "", "default", nil, manifest.OpError,
			[]string{"HOME is not set", "vaults.default.path"}},
		{"default identity without HOME", "", "default", map[string]string{"XDG_DATA_HOME": "/data"}, manifest.OpError,
			[]string{"HOME is not set", "vaults.default.identity"}},
		{"~/ in ARCA_IDENTITY without HOME", "", "default",
			map[string]string{"XDG_DATA_HOME": "/data", "ARCA_IDENTITY": "~/id.txt"}, manifest.OpError,
			[]string{"HOME is not set", "ARCA_IDENTITY"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(tc.doc), "arca.toml", envOf(tc.getenv))
			if err != nil {
				t.Fatalf("ParseConfig: %v", err)
			}
			_, v, err := c.VaultFor(tc.env)
			if err == nil {
				t.Fatalf("VaultFor = %+v, want an error", v)
			}
			wantError(t, err, tc.code, tc.parts...)
		})
	}
	// A Config built by hand (unvalidated) whose env names a missing vault.
	c := &Config{Envs: map[string]EnvConfig{"dev": {Vault: "gone"}}}
	_, _, err := c.VaultFor("dev")
	wantError(t, err, manifest.OpError, `env "dev": vault "gone" is not configured`)
}

func TestAuditFile(t *testing.T) {
	tests := []struct {
		name, doc string
		getenv    map[string]string
		want      string
	}{
		{"configured absolute", "[audit]\nfile = \"/var/log/arca.log\"\n", nil, "/var/log/arca.log"},
		{"configured ~/", "[audit]\nfile = \"~/a.log\"\n", map[string]string{"HOME": "/h"}, "/h/a.log"},
		{"XDG_STATE_HOME", "", map[string]string{"HOME": "/h", "XDG_STATE_HOME": "/state"}, "/state/arca/audit.log"},
		{"relative XDG_STATE_HOME ignored", "", map[string]string{"HOME": "/h", "XDG_STATE_HOME": "state"}, "/h/.local/state/arca/audit.log"},
		{"HOME default", "", map[string]string{"HOME": "/h"}, "/h/.local/state/arca/audit.log"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(tc.doc), "arca.toml", envOf(tc.getenv))
			if err != nil {
				t.Fatalf("ParseConfig: %v", err)
			}
			got, err := c.AuditFile()
			if err != nil || got != tc.want {
				t.Fatalf("AuditFile() = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	for _, doc := range []string{"", "[audit]\nfile = \"~/a.log\"\n"} {
		c, err := ParseConfig([]byte(doc), "arca.toml", envOf(nil))
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.AuditFile()
		wantError(t, err, manifest.OpError, "HOME is not set", "audit.file")
	}
}

func TestOriginString(t *testing.T) {
	for o, want := range map[Origin]string{
		OriginNone: "none", OriginPinned: "pinned", OriginImplicit: "implicit", OriginUser: "user", Origin(42): "unknown",
	} {
		if got := o.String(); got != want {
			t.Errorf("Origin(%d).String() = %q, want %q", int(o), got, want)
		}
	}
}

func TestResolveEnvDoesNotAllocate(t *testing.T) {
	c, err := ParseConfig([]byte(sketch), "arca.toml", envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := c.ResolveEnv("", "prod", "dev"); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("ResolveEnv allocates %v times per call", allocs)
	}
}

func TestNilGetenvMeansOsGetenv(t *testing.T) {
	t.Setenv("HOME", "/from-os")
	t.Setenv("XDG_STATE_HOME", "")
	c, err := ParseConfig(nil, "arca.toml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := c.AuditFile(); got != "/from-os/.local/state/arca/audit.log" {
		t.Fatalf("AuditFile() = %q", got)
	}
	t.Setenv("ARCA_CONFIG", filepath.Join(t.TempDir(), "missing.toml"))
	_, err = LoadConfig("", nil)
	wantError(t, err, manifest.OpError, "(from ARCA_CONFIG) does not exist")
}
