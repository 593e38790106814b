package main

import (
	"github.com/arca-secrets/arca/ops/access"
	"github.com/arca-secrets/arca/ops/bulk"
	"github.com/arca-secrets/arca/ops/ref"
)

// The --json shapes of verbs serve has no op for. Like serve's results
// they are stable and additive: a field may be added, never removed,
// renamed or given another meaning.

// versionJSON is what `arca version --json` prints.
type versionJSON struct {
	Version  string `json:"version"`
	Protocol string `json:"protocol"`
}

// initJSON is what `arca init --json` prints.
type initJSON struct {
	Env      string   `json:"env"`
	Identity pathJSON `json:"identity"`
	Key      string   `json:"public_key"`
	Vault    pathJSON `json:"vault"`
}

// pathJSON is a file init made or kept.
type pathJSON struct {
	Path    string `json:"path"`
	Created bool   `json:"created"`
}

func initResultJSON(r access.InitResult) initJSON {
	return initJSON{Env: r.Env, Identity: pathJSON{r.IdentityPath, r.IdentityCreated}, Key: r.Recipient,
		Vault: pathJSON{r.VaultPath, r.VaultCreated}}
}

// teamJSON is what the `arca vault recipients` verbs and `arca vault
// rekey` print with --json; resealed only for rekey.
type teamJSON struct {
	Env        string   `json:"env"`
	Vault      string   `json:"vault"`
	Recipients []string `json:"recipients"`
	Resealed   *int     `json:"resealed,omitempty"`
}

// bulkJSON is what migrate, restore and backup's restore side print with
// --json: one row per item, in the input's order, and the counts.
type bulkJSON struct {
	Env         string        `json:"env"`
	DryRun      bool          `json:"dry_run"`
	Created     int           `json:"created"`
	Overwritten int           `json:"overwritten"`
	Skipped     int           `json:"skipped"`
	Deleted     int           `json:"deleted,omitempty"` // names a restore brought back soft-deleted
	Rows        []bulkRowJSON `json:"rows"`
	// Of a migration: the keys --skip-empty left out, and those whose
	// values hold $NAME references stored as written (names, never values).
	SkippedEmpty []string `json:"skipped_empty,omitempty"`
	Unexpanded   []string `json:"unexpanded,omitempty"`
}

// bulkRowJSON is one item of a bulk write: its action, and the version it
// has after the write (0 on a dry run and for a skip).
type bulkRowJSON struct {
	Ref     string `json:"ref"`
	Action  string `json:"action"`
	Version uint64 `json:"version"`
}

func bulkResultJSON(r bulk.Result) bulkJSON {
	out := bulkJSON{Env: r.Env, DryRun: r.DryRun, Created: r.Count(bulk.ActionCreate),
		Overwritten: r.Count(bulk.ActionOverwrite), Skipped: r.Count(bulk.ActionSkip), Deleted: r.Count(bulk.ActionDeleted), Rows: make([]bulkRowJSON, len(r.Rows))}
	for i, row := range r.Rows {
		out.Rows[i] = bulkRowJSON{Ref: ref.Scheme + row.Ref, Action: row.Action.String(), Version: row.Version}
	}
	return out
}
