package config

import "testing"

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
			c, err := Parse([]byte(tc.doc), "arca.toml", envOf(tc.getenv))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			got, err := c.AuditFile()
			if err != nil || got != tc.want {
				t.Fatalf("AuditFile() = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	for _, doc := range []string{"", "[audit]\nfile = \"~/a.log\"\n"} {
		c, err := Parse([]byte(doc), "arca.toml", envOf(nil))
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.AuditFile()
		wantErr(t, err, "HOME is not set", "audit.file")
	}
}

func TestExpandVaultDoesNotShareSlices(t *testing.T) {
	sketch := readSketch(t)
	c, err := Parse([]byte(sketch), "arca.toml", envOf(map[string]string{"HOME": "/h"}))
	if err != nil {
		t.Fatal(err)
	}
	v, _ := c.ExpandVault("team", c.Vaults["team"])
	v.Endpoints[0], v.Recipients[0] = "evil:1", "evil"
	v, _ = c.ExpandVault("team", c.Vaults["team"])
	if v.Endpoints[0] != "127.0.0.1:2379" || v.Recipients[0] != "age1xyz" {
		t.Fatalf("ExpandVault shares the config's slices: %+v", v)
	}
}
