package config

import (
	"fmt"
	"time"

	"github.com/arca-secrets/arca/vault"
)

// historyDoc is a [vaults.NAME.history] table as decoded (SPEC §11):
// omitted keys are nil, and take the defaults every vault has.
type historyDoc struct {
	MaxVersions *int    `toml:"max_versions"`
	KeepDeleted *string `toml:"keep_deleted"`
}

// HistorySettings is the vault's history settings: what [vaults.NAME.history]
// says, the defaults where it is silent. A VaultConfig made in code
// rather than read (the zero History) has the defaults.
func (v VaultConfig) HistorySettings() vault.History {
	if v.History.MaxVersions == 0 {
		return vault.DefaultHistory()
	}
	return v.History
}

// resolveHistory is the history settings h gives: max_versions 1 to
// vault.MaxMaxVersions, keep_deleted a duration of 0 or more ("0s": rm
// erases at once), each the default when omitted. The message of a
// problem starts with the key.
func resolveHistory(h *historyDoc) (vault.History, string) {
	out := vault.DefaultHistory()
	if h == nil {
		return out, ""
	}
	if h.MaxVersions != nil {
		if n := *h.MaxVersions; n < 1 || n > vault.MaxMaxVersions {
			return out, fmt.Sprintf("history.max_versions is %d, must be 1..%d (unset: %d)", n, vault.MaxMaxVersions, vault.DefaultMaxVersions)
		}
		out.MaxVersions = *h.MaxVersions
	}
	if h.KeepDeleted != nil {
		d, err := time.ParseDuration(*h.KeepDeleted)
		switch {
		case err != nil:
			return out, fmt.Sprintf("history.keep_deleted %q is not a duration such as \"720h\" or \"0s\"", *h.KeepDeleted)
		case d < 0:
			return out, fmt.Sprintf("history.keep_deleted %q is negative (\"0s\" makes rm erase at once)", *h.KeepDeleted)
		}
		out.KeepDeleted = d
	}
	return out, ""
}
