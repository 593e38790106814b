package vault

import (
	"errors"
	"fmt"
	"iter"
	"time"
)

// History is a vault's history settings: how many versions of a name it
// keeps and how long an rm can be undone.
type History struct {
	MaxVersions int           // versions kept per name, the current one included; 1 keeps none
	KeepDeleted time.Duration // how long a removed name can be undeleted; 0: rm erases at once
}

// Bounds and defaults of History.
const (
	DefaultMaxVersions = 10
	MaxMaxVersions     = 100
	DefaultKeepDeleted = 720 * time.Hour
)

// DefaultHistory is the history every vault has unless its config says
// otherwise.
func DefaultHistory() History {
	return History{MaxVersions: DefaultMaxVersions, KeepDeleted: DefaultKeepDeleted}
}

// Validate refuses settings out of bounds.
func (h History) Validate() error {
	if h.MaxVersions < 1 || h.MaxVersions > MaxMaxVersions {
		return fmt.Errorf("max_versions must be from 1 to %d, not %d", MaxMaxVersions, h.MaxVersions)
	}
	if h.KeepDeleted < 0 {
		return fmt.Errorf("keep_deleted must not be negative")
	}
	return nil
}

// Chain is everything a vault holds of one name: its current record, the
// earlier versions it keeps, and what outlives them (the highest version
// number it ever had, so that numbering continues).
type Chain struct {
	Name       string
	Current    Record // valid when HasCurrent
	HasCurrent bool
	// Previous are the kept earlier versions, newest first, values
	// included. While the name is soft-deleted, Previous[0] is the version
	// rm removed: the one undelete brings back.
	Previous  []Record
	Highest   uint64    // the highest version the name ever had; 0: never written
	DeletedAt time.Time // nonzero while soft-deleted
	ChangedAt time.Time // when the name last changed state
}

// Known reports whether the vault holds anything of the name, even only
// its highest version number.
func (c *Chain) Known() bool { return c.Highest > 0 || c.HasCurrent }

// Deleted reports whether the name is soft-deleted.
func (c *Chain) Deleted() bool { return !c.DeletedAt.IsZero() }

// CurrentVersion is the current version; 0 when there is none.
func (c *Chain) CurrentVersion() uint64 {
	if c.HasCurrent {
		return c.Current.Version
	}
	return 0
}

// Find returns the kept version v, current or previous.
func (c *Chain) Find(v uint64) (Record, bool) {
	if c.HasCurrent && c.Current.Version == v {
		return c.Current, true
	}
	for _, r := range c.Previous {
		if r.Version == v {
			return r, true
		}
	}
	return Record{}, false
}

// VersionState is what one kept version is to its name.
type VersionState string

// The states of a kept version.
const (
	StateCurrent  VersionState = "current"
	StatePrevious VersionState = "previous"
	StateDeleted  VersionState = "deleted"
	StateErased   VersionState = "erased" // a name with no version kept (Change only)
)

// VersionInfo is one kept version as history shows it: no value.
type VersionInfo struct {
	Meta
	State VersionState
}

// Versions is the history of a name, newest first, without values.
func (c *Chain) Versions() []VersionInfo {
	out := make([]VersionInfo, 0, len(c.Previous)+1)
	for st, r := range c.All() {
		out = append(out, VersionInfo{r.Meta, st})
	}
	return out
}

// All yields the kept versions, newest first, each with its state.
func (c *Chain) All() iter.Seq2[VersionState, *Record] {
	return func(yield func(VersionState, *Record) bool) {
		if c.HasCurrent && !yield(StateCurrent, &c.Current) {
			return
		}
		for i := range c.Previous {
			st := StatePrevious
			if i == 0 && c.Deleted() {
				st = StateDeleted
			}
			if !yield(st, &c.Previous[i]) {
				return
			}
		}
	}
}

// State is the name's state as changes reports it, with its version: the
// current one, the deleted one, or (erased) the highest it had.
func (c *Chain) State() (VersionState, uint64) {
	switch {
	case c.HasCurrent:
		return StateCurrent, c.Current.Version
	case c.Deleted() && len(c.Previous) > 0:
		return StateDeleted, c.Previous[0].Version
	}
	return StateErased, c.Highest
}

// Change is one name whose state changed, as changes reports it.
type Change struct {
	Name    string
	Version uint64
	State   VersionState
	At      time.Time
}

// Changes is an answer of Store.Changes.
type Changes struct {
	Cursor    string
	Changes   []Change
	Truncated bool // more changed: ask again with Cursor
	Reset     bool // the cursor is older than the vault can account for: list again
}

// MaxChanges is the most changes one answer holds.
const MaxChanges = 10000

// ErrBadCursor is a changes cursor this vault never gave.
var ErrBadCursor = errors.New("not a changes cursor arca gave")

// ConflictError is a write whose if_version is not the current version:
// nothing was written.
type ConflictError struct {
	Current uint64 // 0: no current record
}

func (e *ConflictError) Error() string {
	if e.Current == 0 {
		return "version conflict: there is no current version"
	}
	return fmt.Sprintf("version conflict: the current version is %d", e.Current)
}

// VersionNotFoundError is a version the vault does not keep.
type VersionNotFoundError struct {
	Versions []uint64
}

func (e *VersionNotFoundError) Error() string {
	if len(e.Versions) == 1 {
		return fmt.Sprintf("version %d is not kept", e.Versions[0])
	}
	return fmt.Sprintf("versions %v are not kept", e.Versions)
}

// Is makes a VersionNotFoundError an ErrNotFound.
func (e *VersionNotFoundError) Is(target error) bool { return target == ErrNotFound }
