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
	Decision
}

// CheckResult is the result of check. A problem found is a successful check
// that reports it.
type CheckResult struct {
	Env      string   `json:"env"`
	Vault    string   `json:"vault"`
	Kind     Kind     `json:"kind"`
	Healthy  bool     `json:"healthy"`
	Records  int      `json:"records"`
	Problems []string `json:"problems"`
	Info     []string `json:"info,omitempty"` // what was found healthy (a shared vault's members)
	Decision
}
