package config

import (
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

// wantErr fails unless err is an error whose message contains every part.
func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("err = nil, want an error")
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("message %q, want it to contain %q", err.Error(), p)
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

func TestLoadFinds(t *testing.T) {
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
			c, err := Load(flag, envOf(env))
			if err != nil {
				t.Fatalf("Load: %v", err)
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

func TestLoadFails(t *testing.T) {
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
		{"endless config", func(t *testing.T, root string) (string, map[string]string) {
			return "/dev/zero", nil
		}, []string{"config /dev/zero is larger than the 1048576-byte cap"}},
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
			c, err := Load(flag, envOf(env))
			if err == nil {
				t.Fatalf("Load succeeded: %+v", c)
			}
			wantErr(t, err, tc.parts...)
		})
	}
}

func TestLoadPinnedDetails(t *testing.T) {
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
	c, err := Load("", envOf(map[string]string{"HOME": home, "ARCA_CONFIG": "~/cfg/arca.toml"}))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if want := filepath.Join(home, "cfg", "arca.toml"); c.Path != want || c.Origin != OriginPinned {
		t.Fatalf("Path, Origin = %q, %v; want %q, pinned", c.Path, c.Origin, want)
	}
	// Relative paths in a config file are relative to that file.
	v, err := c.ExpandVault("default", c.Vaults["default"])
	if err != nil {
		t.Fatalf("ExpandVault: %v", err)
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
	if _, err := Load(p, envOf(nil)); err != nil {
		t.Fatalf("a config of exactly the cap: %v", err)
	}
}

func TestNilGetenvMeansOsGetenv(t *testing.T) {
	t.Setenv("HOME", "/from-os")
	t.Setenv("XDG_STATE_HOME", "")
	c, err := Parse(nil, "arca.toml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := c.AuditFile(); got != "/from-os/.local/state/arca/audit.log" {
		t.Fatalf("AuditFile() = %q", got)
	}
	t.Setenv("ARCA_CONFIG", filepath.Join(t.TempDir(), "missing.toml"))
	_, err = Load("", nil)
	wantErr(t, err, "(from ARCA_CONFIG) does not exist")
}
