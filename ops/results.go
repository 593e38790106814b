package ops

import (
	"strconv"
	"time"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/internal/jsonstr"
	"github.com/arca-secrets/arca/vault"
)

// Time is a record time. It prints and marshals as UTC RFC 3339 with
// nanoseconds; the zero Time is "never".
type Time struct{ time.Time }

// String formats t as audit.TimeFormat.
func (t Time) String() string { return audit.FormatTime(t.Time) }

// MarshalJSON formats t as a JSON string.
func (t Time) MarshalJSON() ([]byte, error) {
	return append(audit.AppendTime([]byte{'"'}, t.Time), '"'), nil
}

// Stamp is a record's times.
type Stamp struct {
	CreatedAt Time `json:"created_at"`
	UpdatedAt Time `json:"updated_at"`
	RotatedAt Time `json:"rotated_at,omitzero"` // zero until a rotate
}

func stampOf(m vault.Meta) Stamp {
	return Stamp{CreatedAt: Time{m.CreatedAt}, UpdatedAt: Time{m.UpdatedAt}, RotatedAt: Time{m.RotatedAt}}
}

// GetResult is the result of get. Value is never marshalled: whoever sends
// it takes it from Value.Reveal on purpose.
type GetResult struct {
	Ref     string       `json:"ref"`
	Env     string       `json:"env"`
	Value   vault.Secret `json:"-"`
	Version uint64       `json:"version"`
	Stamp
	// ExpiresAt is when the grant the get ran under ends; zero (and not
	// encoded) when there is none, or it is unbounded by time.
	ExpiresAt time.Time `json:"-"`
	Decision
}

// Released is a result that hands its caller a value: get's, and any later
// op's that does (rollback). serve registers the value with the session's
// scrub as it answers, so that scrub redacts it from then on.
type Released interface {
	Result
	// Released returns the ref (canonical, arca://ns/name) and the value
	// handed out.
	Released() (ref string, value vault.Secret)
}

// Released returns the ref and the value r hands out.
func (r GetResult) Released() (string, vault.Secret) { return r.Ref, r.Value }

// AppendJSON appends r as the result.get schema says. This is the one
// place a value is encoded as JSON: for serve's wire, and for
// `arca get --json`.
func (r GetResult) AppendJSON(b []byte) []byte {
	b = append(b, `{"ref":`...)
	b = jsonstr.Append(b, r.Ref)
	b = append(b, `,"env":`...)
	b = jsonstr.Append(b, r.Env)
	b = append(b, `,"value":`...)
	b = jsonstr.Append(b, r.Value.Reveal())
	b = append(b, `,"version":`...)
	b = strconv.AppendUint(b, r.Version, 10)
	b = append(b, `,"created_at":"`...)
	b = audit.AppendTime(b, r.CreatedAt.Time)
	b = append(b, `","updated_at":"`...)
	b = audit.AppendTime(b, r.UpdatedAt.Time)
	b = append(b, '"')
	if !r.RotatedAt.IsZero() {
		b = append(b, `,"rotated_at":"`...)
		b = audit.AppendTime(b, r.RotatedAt.Time)
		b = append(b, '"')
	}
	if !r.ExpiresAt.IsZero() {
		b = append(b, `,"expires_at":"`...)
		b = audit.AppendTime(b, r.ExpiresAt)
		b = append(b, '"')
	}
	return append(b, '}')
}

// PutResult is the result of put.
type PutResult struct {
	Ref       string `json:"ref"`
	Env       string `json:"env"`
	Version   uint64 `json:"version"`
	Created   bool   `json:"created"`
	CreatedAt Time   `json:"created_at"`
	UpdatedAt Time   `json:"updated_at"`
	Decision
}

// RotateResult is the result of rotate.
type RotateResult struct {
	Ref     string `json:"ref"`
	Env     string `json:"env"`
	Version uint64 `json:"version"`
	Stamp
	Decision
}

// RmResult is the result of rm: the version the record had.
type RmResult struct {
	Ref     string `json:"ref"`
	Env     string `json:"env"`
	Removed bool   `json:"removed"`
	Version uint64 `json:"version"`
	Decision
}

// ListRecord is one row of a list. DeletedAt is set on a soft-deleted
// name (list with deleted): when rm removed it; its version is the one
// undelete brings back.
type ListRecord struct {
	Ref     string `json:"ref"`
	Version uint64 `json:"version"`
	Stamp
	DeletedAt Time `json:"deleted_at,omitzero"`
}

// ListResult is the result of list: at most manifest.MaxListRows rows,
// sorted by ref; Truncated and Omitted say what was left out.
type ListResult struct {
	Env       string       `json:"env"`
	Records   []ListRecord `json:"records"`
	Truncated bool         `json:"truncated"`
	Omitted   int          `json:"omitted"`
	// Matched is, for a list with a Page, how many names its Match
	// picked: Records is a window of them. Not on the wire.
	Matched int `json:"-"`
	Decision
}

// CheckResult is the result of check. A problem found is a successful check
// that reports it. Versions and Erased are what the check found of
// history: the earlier versions it authenticated, and the soft-deleted
// names past keep_deleted it erased.
type CheckResult struct {
	Env      string   `json:"env"`
	Vault    string   `json:"vault"`
	Kind     Kind     `json:"kind"`
	Healthy  bool     `json:"healthy"`
	Records  int      `json:"records"`
	Versions int      `json:"versions"`
	Erased   int      `json:"erased"`
	Problems []string `json:"problems"`
	Info     []string `json:"info,omitempty"` // what was found healthy (a shared vault's members)
	Decision
}

// RollbackResult is the result of rollback: the put result of the new
// version, and the version whose value it wrote again.
type RollbackResult struct {
	PutResult
	RolledBackFrom uint64 `json:"rolled_back_from"`
}

// UndeleteResult is the result of undelete: the put result of the
// version it made current again, as a new version.
type UndeleteResult struct {
	PutResult
	Undeleted bool `json:"undeleted"`
}

// DestroyResult is the result of destroy: the versions it erased, and
// whether no version of the name is left.
type DestroyResult struct {
	Ref       string   `json:"ref"`
	Env       string   `json:"env"`
	Destroyed []uint64 `json:"destroyed"`
	Removed   bool     `json:"removed"`
	Decision
}

// HistoryVersion is one kept version as history shows it: never a value.
// CreatedAt is when this version was written.
type HistoryVersion struct {
	Version   uint64 `json:"version"`
	State     string `json:"state"`
	CreatedAt Time   `json:"created_at"`
}

// HistoryResult is the result of history: a name's kept versions, newest
// first. Current is nil while the name has no current version.
type HistoryResult struct {
	Ref         string           `json:"ref"`
	Env         string           `json:"env"`
	Current     *uint64          `json:"current"`
	DeletedAt   Time             `json:"deleted_at,omitzero"`
	MaxVersions int              `json:"max_versions"`
	Versions    []HistoryVersion `json:"versions"`
	Decision
}

// ChangeRow is one name whose state changed, with its state now.
type ChangeRow struct {
	Ref     string `json:"ref"`
	Version uint64 `json:"version"`
	State   string `json:"state"`
	At      Time   `json:"at"`
}

// ChangesResult is the result of changes.
type ChangesResult struct {
	Env       string      `json:"env"`
	Cursor    string      `json:"cursor"`
	Changes   []ChangeRow `json:"changes"`
	Truncated bool        `json:"truncated"`
	Reset     bool        `json:"reset"`
	Decision
}
