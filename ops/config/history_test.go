package config

import (
	"strings"
	"testing"
	"time"

	"github.com/arca-secrets/arca/vault"
)

// TestHistory: [vaults.NAME.history] is read with its defaults, bounded,
// and strict about its keys; a vault without it, or made in code, has the
// defaults.
func TestHistory(t *testing.T) {
	const head = "[vaults.local]\nkind = \"file\"\n"
	for _, c := range []struct {
		name, doc string
		want      vault.History
	}{
		{"omitted", head, vault.DefaultHistory()},
		{"empty table", head + "[vaults.local.history]\n", vault.DefaultHistory()},
		{"both", head + "[vaults.local.history]\nmax_versions = 3\nkeep_deleted = \"1h\"\n", vault.History{MaxVersions: 3, KeepDeleted: time.Hour}},
		{"erase at once", head + "[vaults.local.history]\nkeep_deleted = \"0s\"\n", vault.History{MaxVersions: 10, KeepDeleted: 0}},
		{"one keeps none", head + "[vaults.local.history]\nmax_versions = 1\n", vault.History{MaxVersions: 1, KeepDeleted: 720 * time.Hour}},
		{"the most", head + "[vaults.local.history]\nmax_versions = 100\n", vault.History{MaxVersions: 100, KeepDeleted: 720 * time.Hour}},
	} {
		cfg, err := Parse([]byte(c.doc), "arca.toml", func(string) string { return "" })
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := cfg.Vaults["local"].HistorySettings(); got != c.want {
			t.Errorf("%s: history %+v, want %+v", c.name, got, c.want)
		}
	}
	if got := (VaultConfig{Kind: KindFile}).HistorySettings(); got != vault.DefaultHistory() {
		t.Errorf("a vault made in code has history %+v, want the defaults", got)
	}
	for _, c := range []struct{ name, doc, want string }{
		{"zero", "max_versions = 0\n", `arca.toml: vaults.local.history.max_versions is 0, must be 1..100 (unset: 10)`},
		{"too many", "max_versions = 101\n", `vaults.local.history.max_versions is 101, must be 1..100`},
		{"negative", "keep_deleted = \"-1h\"\n", `vaults.local.history.keep_deleted "-1h" is negative`},
		{"not a duration", "keep_deleted = \"30 days\"\n", `vaults.local.history.keep_deleted "30 days" is not a duration`},
		{"unknown key", "max_version = 3\n", `arca.toml:4: unknown key "vaults.local.history.max_version"`},
		{"wrong type", "keep_deleted = 720\n", `key "vaults.local.history.keep_deleted": wrong type`},
	} {
		_, err := Parse([]byte(head+"[vaults.local.history]\n"+c.doc), "arca.toml", func(string) string { return "" })
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}
