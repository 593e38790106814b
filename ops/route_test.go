package ops

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops/config"
	"github.com/arca-secrets/arca/ops/ref"
)

// Every ref package failure reaches callers of ops as bad_request, with
// the ref package's message.
func TestParseRefIsBadRequest(t *testing.T) {
	for _, in := range []string{"", "ARCA://a/b", "arca://a", "arca://a//b", "arca://../b", "arca://a/b\n",
		"arca://a/" + strings.Repeat("b", manifest.MaxRef)} {
		_, want := ref.Parse(in)
		got, err := ParseRef(in)
		var e *Error
		if !errors.As(err, &e) || e.Code != manifest.BadRequest {
			t.Fatalf("ParseRef(%q): err = %#v, want *Error with code bad_request", in, err)
		}
		if want == nil || e.Msg != want.Error() || got != (ref.Ref{}) {
			t.Fatalf("ParseRef(%q) = %+v, %q; want the zero Ref and %v", in, got, e.Msg, want)
		}
	}
	got, err := ParseRef("arca://prod/billing/key")
	if err != nil || got.Env != "prod" || got.Path() != "billing/key" || got.Canonical() != "arca://billing/key" {
		t.Fatalf("ParseRef = %+v, %v", got, err)
	}
}

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

// readSketch is the config package's sketch: every section, file and etcd
// vaults, a guardrail and a PDP.
func readSketch(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile("config/testdata/sketch.toml")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Every config failure reaches callers of ops as op_error, with the config
// package's message: finding, reading, decoding, validating, path defaults.
func TestConfigErrorsAreOpError(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "arca.toml"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ flag, home string }{
		{filepath.Join(dir, "missing.toml"), "/h"}, {filepath.Join(dir, "arca.toml"), "/h"}, {"~/arca.toml", ""},
	} {
		getenv := envOf(map[string]string{"HOME": tc.home})
		_, want := config.Load(tc.flag, getenv)
		_, err := LoadConfig(tc.flag, getenv)
		if want == nil {
			t.Fatalf("config.Load(%q) succeeded", tc.flag)
		}
		wantError(t, err, manifest.OpError, want.Error())
	}
	for _, doc := range []string{"bogus = 1\n", "default_env = 5\n", "default_env = = 1\n", "[envs.dev]\n",
		"[vaults.x]\nkind = \"s3\"\n", "[[guardrails.rule]]\n", "[serve.pdp]\nexec = \"x\"\ntimeout_ms = 0\n"} {
		_, want := config.Parse([]byte(doc), "arca.toml", envOf(nil))
		_, err := ParseConfig([]byte(doc), "arca.toml", envOf(nil))
		if want == nil {
			t.Fatalf("config.Parse(%q) succeeded", doc)
		}
		wantError(t, err, manifest.OpError, want.Error())
	}
	c, err := ParseConfig(nil, "arca.toml", envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.AuditFile()
	wantError(t, err, manifest.OpError, "HOME is not set; needed for the default audit.file")
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

func TestResolveEnvZeroConfig(t *testing.T) {
	if env, err := (&Config{}).ResolveEnv("", "", ""); err != nil || env != "default" {
		t.Fatalf("zero Config ResolveEnv = %q, %v", env, err)
	}
}

func TestVaultFor(t *testing.T) {
	sketch := readSketch(t)
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
			VaultConfig{Kind: KindFile, Path: "/data/arca/default.vault", Identity: "/cfg/arca/identity.txt"}},
		{"no config, HOME dirs", "", "default", homeOnly, "default",
			VaultConfig{Kind: KindFile, Path: "/h/.local/share/arca/default.vault", Identity: "/h/.config/arca/identity.txt"}},
		{"relative XDG dirs are ignored", "", "default",
			map[string]string{"HOME": "/h", "XDG_CONFIG_HOME": "cfg", "XDG_DATA_HOME": "./data"}, "default",
			VaultConfig{Kind: KindFile, Path: "/h/.local/share/arca/default.vault", Identity: "/h/.config/arca/identity.txt"}},
		{"ARCA_IDENTITY overrides the default", "", "default",
			map[string]string{"HOME": "/h", "ARCA_IDENTITY": "/keys/me.txt"}, "default",
			VaultConfig{Kind: KindFile, Path: "/h/.local/share/arca/default.vault", Identity: "/keys/me.txt"}},
		{"~/ in ARCA_IDENTITY", "", "default",
			map[string]string{"HOME": "/h", "ARCA_IDENTITY": "~/me.txt"}, "default",
			VaultConfig{Kind: KindFile, Path: "/h/.local/share/arca/default.vault", Identity: "/h/me.txt"}},
		{"vault identity overrides ARCA_IDENTITY",
			"[vaults.default]\nkind = \"file\"\nidentity = \"/v/id.txt\"\n", "default",
			map[string]string{"HOME": "/h", "ARCA_IDENTITY": "/keys/me.txt"}, "default",
			VaultConfig{Kind: KindFile, Path: "/h/.local/share/arca/default.vault", Identity: "/v/id.txt"}},
		{"configured default vault without envs",
			"[vaults.default]\nkind = \"file\"\npath = \"~/vaults/mine.vault\"\n", "default", homeOnly, "default",
			VaultConfig{Kind: KindFile, Path: "/h/vaults/mine.vault", Identity: "/h/.config/arca/identity.txt"}},
		{"file vault path defaults to its name",
			"[vaults.local]\nkind = \"file\"\n[envs.dev]\nvault = \"local\"\n", "dev", xdg, "local",
			VaultConfig{Kind: KindFile, Path: "/data/arca/local.vault", Identity: "/cfg/arca/identity.txt"}},
		{"~/ expansion", sketch, "dev", homeOnly, "local",
			VaultConfig{Kind: KindFile, Path: "/h/.local/share/arca/dev.vault", Identity: "/h/.config/arca/identity.txt"}},
		{"relative path kept without a config file",
			"[vaults.local]\nkind = \"file\"\npath = \"rel.vault\"\n[envs.dev]\nvault = \"local\"\n", "dev", homeOnly, "local",
			VaultConfig{Kind: KindFile, Path: "rel.vault", Identity: "/h/.config/arca/identity.txt"}},
		{"etcd vault", sketch, "prod", xdg, "team",
			VaultConfig{Kind: KindEtcd, Identity: "/cfg/arca/identity.txt", Recipients: []string{"age1xyz"},
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

func TestVaultForFails(t *testing.T) {
	sketch := readSketch(t)
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
	c := &Config{Config: config.Config{Envs: map[string]config.EnvConfig{"dev": {Vault: "gone"}}}}
	_, _, err := c.VaultFor("dev")
	wantError(t, err, manifest.OpError, `env "dev": vault "gone" is not configured`)
}

func TestResolveEnvDoesNotAllocate(t *testing.T) {
	sketch := readSketch(t)
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
