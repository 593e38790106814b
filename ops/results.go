package ops

import (
	"time"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/vault"
)

// Stamp is a record's times, UTC RFC 3339 with nanoseconds.
type Stamp struct {
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
	RotatedAt string `json:"rotated_at,omitempty"`
}

func stampOf(m vault.Meta) Stamp {
	s := Stamp{CreatedAt: fmtTime(m.CreatedAt), UpdatedAt: fmtTime(m.UpdatedAt)}
	if !m.RotatedAt.IsZero() {
		s.RotatedAt = fmtTime(m.RotatedAt)
	}
	return s
}

func fmtTime(t time.Time) string { return audit.FormatTime(t) }

// GetResult is the result of get. Value is never marshalled: whoever sends
// it takes it from Value.Reveal on purpose.
type GetResult struct {
	Ref     string       `json:"ref"`
	Env     string       `json:"env"`
	Value   vault.Secret `json:"-"`
	Version uint64       `json:"version"`
	Stamp
}

// PutResult is the result of put.
type PutResult struct {
	Ref       string `json:"ref"`
	Env       string `json:"env"`
	Version   uint64 `json:"version"`
	Created   bool   `json:"created"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
}

// RotateResult is the result of rotate.
type RotateResult struct {
	Ref     string `json:"ref"`
	Env     string `json:"env"`
	Version uint64 `json:"version"`
	Stamp
}

// RmResult is the result of rm: the version the record had.
type RmResult struct {
	Ref     string `json:"ref"`
	Env     string `json:"env"`
	Removed bool   `json:"removed"`
	Version uint64 `json:"version"`
}

// ListRecord is one row of a list.
type ListRecord struct {
	Ref     string `json:"ref"`
	Version uint64 `json:"version"`
	Stamp
}

// ListResult is the result of list: at most manifest.MaxListRows rows,
// sorted by ref; Truncated and Omitted say what was left out.
type ListResult struct {
	Env       string       `json:"env"`
	Records   []ListRecord `json:"records"`
	Truncated bool         `json:"truncated"`
	Omitted   int          `json:"omitted"`
}

// CheckResult is the result of check. A problem found is a successful check
// that reports it.
type CheckResult struct {
	Env      string   `json:"env"`
	Vault    string   `json:"vault"`
	Kind     string   `json:"kind"`
	Healthy  bool     `json:"healthy"`
	Records  int      `json:"records"`
	Problems []string `json:"problems"`
}
