// Package vault is the storage contract every backend meets: Store and
// Keyed, the records and writes they take (Meta, Record, Write, Approve,
// Report), the Secret type values travel in, the errors callers branch on,
// and the rules every backend follows for versions and times (Step) and
// for read epochs (WithEpoch).
//
// The backends live beneath it: vault/file (kind "file", the embedded
// default) and vault/etcd (kind "etcd", the shared vault). Both seal records
// with vault/internal/seal: a random 256-bit data key wrapped with age to
// the vault's recipients, HKDF-derived record and slot keys, slot ids that
// are keyed hashes of names, XChaCha20-Poly1305 records bound to their slot
// and vault. vault/vaulttest is the conformance suite every backend passes.
//
// What a backend is trusted with. A backend holds the unwrapped data key
// of the vault it opened and sees names and values in the clear while it
// seals and opens them, in this process only; what it stores or sends is
// only ever what seal produced: the header (wrapped key, recipients, MAC)
// and sealed records under slot ids. A backend must never put a name or a
// value in an error, a log line or its storage in the clear, must call
// Approve before it commits and commit nothing Approve refused, and must
// lose no write to a concurrent one.
//
// Threat model of what is stored: whoever can read a vault's storage learns
// how many records there are, their sizes and when they change, nothing
// else. Whoever can write it can delete records or roll the whole vault, or
// any one record, back to an earlier state (nothing binds a record to its
// version), but cannot forge a record, move one to another slot or vault,
// or change one undetected: a record that fails to authenticate is an
// error, never a wrong value. docs/threat-model.md has each backend's
// details.
package vault

import (
	"context"
	"errors"
	"time"
)

// ErrNotFound is returned when no record has the requested name.
var ErrNotFound = errors.New("not found")

// ErrCommitFirst is Group.Add's answer to a write that can only join a
// new group (see Group).
var ErrCommitFirst = errors.New("the group must be committed before this write")

// Meta is a record's metadata. Times are UTC.
type Meta struct {
	Name      string // "ns/name"
	Version   uint64 // 1 on create, +1 on every put or rotate
	CreatedAt time.Time
	UpdatedAt time.Time
	RotatedAt time.Time // zero until the first rotate
	Created   bool      // set on the result of a put that created the record
	// Touch is what a write did beyond the version it left, for the
	// writes that do more (an erase, a rollback, an undelete, a soft
	// delete); nil otherwise, and on what reads return but List(deleted).
	Touch *Touch
}

// Touch is what a write did to a name's versions beyond Meta.Version.
type Touch struct {
	Erased    []uint64  // versions the write erased (max_versions, destroy, an rm that erases), ascending
	Gone      bool      // no version of the name is left (destroy, an rm that erases)
	From      uint64    // the version a rollback or undelete wrote again
	DeletedAt time.Time // set by a soft delete; on List(deleted), when it was deleted
}

// Record is a stored secret with its metadata.
type Record struct {
	Meta
	Value Secret
}

// Kind is the kind of change a Write makes.
type Kind int

// The kinds of change.
const (
	Put      Kind = iota + 1 // create or overwrite
	Rotate                   // overwrite an existing record; ErrNotFound if missing
	Remove                   // delete an existing record; ErrNotFound if missing
	Restore                  // create or overwrite with Write.Meta's version and times (or Write.Chain), as a backup holds them
	Rollback                 // write version Write.Version's value again, as a new version
	Undelete                 // make a soft-deleted name's last version current again, as a new version
	Destroy                  // erase Write.Versions now, or every version of the name when nil
)

// Write is one change to one record.
type Write struct {
	Kind  Kind
	Name  string
	Value Secret // for Put, Rotate and Restore
	Meta  Meta   // for Restore: the version and times the record is given
	// IfVersion, when set, makes the write conditional: it is a
	// *ConflictError, and nothing is written, unless the current version
	// is *IfVersion (0: no current record). Checked before anything else.
	IfVersion *uint64
	Version   uint64   // for Rollback: the version written again
	Versions  []uint64 // for Destroy: the versions erased; nil: all of them
	Chain     *Chain   // for Restore: the whole name as a backup holds it (Meta and Value are then unused)
}

// Batch is the writes of Store.ApplyBatch: Len of them, the i-th given by
// At(i). A bulk write hands its own records through it rather than
// holding a copy of each as a Write.
type Batch interface {
	Len() int
	At(i int) Write
}

// Writes is a Batch held in a slice.
type Writes []Write

// Len implements Batch.
func (ws Writes) Len() int { return len(ws) }

// At implements Batch.
func (ws Writes) At(i int) Write { return ws[i] }

// Approve is called by Store.Apply once a change is prepared and before it is
// committed, with the metadata the record will have (for Remove: the metadata
// it had). An error aborts the change, which is then never committed. The
// ops layer writes the audit event here: nothing changes unaudited.
type Approve func(Meta) error

// ApproveBatch is Approve for Store.ApplyBatch. Before a unit of the batch
// is committed it is called, one or more times, with the metadata each of
// the unit's writes will leave (for Remove: what the record had): runs of
// consecutive writes, in the order of the writes, that together cover the
// unit. A large unit is shown in runs so that its metadata is never held
// whole; ms is valid only during the call. An error aborts the unit, and
// the rest of the batch with it.
type ApproveBatch func([]Meta) error

// Group is writes that arrive one by one, each prepared and approved on
// its own and all committed at once: what serve makes of consecutive
// write requests. Add prepares a write against the vault as the group's
// earlier writes leave it (a rotate of a record an earlier write created
// finds it; two writes of one record are applied in turn), calls approve
// with the metadata it will leave (for Remove: what the record had), and
// keeps the change for Commit if approve returned nil. A write that cannot
// be prepared (ErrNotFound, an unknown Kind, a record that fails to
// authenticate, a vault that would grow past its bound) or whose approve
// fails is dropped alone, unapproved or refused, and the group carries on
// without it. Commit commits every kept write, landing whole or not at
// all (with ErrUnknownOutcome: perhaps), and ends the group; Abort drops
// the kept writes uncommitted and ends it. A group may hold the vault's
// writer lock from Store.Group to its end, so it is ended promptly and
// used by one goroutine. The file vault commits a group with one rewrite
// and one fsync; the shared vault commits it in one transaction.
//
// Add may also answer ErrCommitFirst, having neither prepared nor
// approved w: the group is as full as the backend lets one be, or it
// lost what it held for its writes (the shared vault's writer lock) and w
// would have to wait for it with writes in hand. The caller commits the
// group and adds w to a new one; a group with no write kept never answers
// it.
type Group interface {
	Add(ctx context.Context, w Write, approve Approve) (Meta, error)
	Commit(ctx context.Context) error
	Abort()
}

// Reserver is a Group that can take ahead, in one step, what its writes
// of the named records will need: the shared vault's record locks, taken
// together, and the records read under them. Reserve is called before the
// group's first Add, at most once; it waits for other writers as a first
// Add would, until ctx's deadline or the vault's own. A write of a name it
// was given is then prepared without a round trip of its own; any other
// write is handled by Add as ever. names may repeat, hold names no write
// will carry (a write that is refused before it reaches the vault) and be
// empty; a backend may take fewer than it was given (its group is bounded).
// The file vault needs no such step and does not implement it.
type Reserver interface {
	Reserve(ctx context.Context, names []string) error
}

// Report is the result of a Check. Problems and Info are one line each and
// name no secret and no record name. Info says what was found healthy
// (for a shared vault: the members that answered).
type Report struct {
	Records  int
	Versions int // kept earlier versions authenticated
	Erased   int // soft-deleted names past keep_deleted that the check erased
	Problems []string
	Info     []string
}

// Store is a vault backend. Implementations are safe for concurrent use, by
// goroutines and, for backends that share storage, by processes: no write is
// ever lost to a concurrent one. Names are "ns/name", already validated.
type Store interface {
	// Get returns the record named name, or ErrNotFound.
	Get(ctx context.Context, name string) (Record, error)
	// List returns the metadata of every record, sorted by name.
	List(ctx context.Context) ([]Meta, error)
	// Records returns every record, values included, sorted by name, read
	// in one consistent pass: what a backup or an export reads.
	Records(ctx context.Context) ([]Record, error)
	// Apply prepares w, calls approve, and commits the change if approve
	// returned nil. It returns the record's metadata after the change (for
	// Remove: before it).
	Apply(ctx context.Context, w Write, approve Approve) (Meta, error)
	// ApplyBatch applies the writes of b in order, each as Apply would, in
	// commit units: a unit's writes are prepared, approved (every one of
	// them before any is committed), and committed together, landing whole
	// or not at all, and a unit is committed only after the one before it
	// landed. The file vault makes a batch one unit; a shared vault may
	// split it (etcd: transactions of bounded size). It returns how many
	// writes landed: always a prefix of b. On an error the writes past that
	// prefix did not land, except that with ErrUnknownOutcome the unit in
	// flight may have. A batch CheckBatch refuses is refused before
	// anything is approved; an empty one does nothing.
	ApplyBatch(ctx context.Context, b Batch, approve ApproveBatch) (int, error)
	// Group starts a group of writes committed together (see Group). It
	// fails only when no write could be prepared (the vault cannot be read
	// or reached); the caller must end the group with Commit or Abort.
	Group(ctx context.Context) (Group, error)
	// Check probes the vault: reachability, the key, every record and
	// every kept version; it erases the soft-deleted names past
	// keep_deleted (Report.Erased).
	Check(ctx context.Context) (Report, error)

	// SetHistory sets the history settings the writes follow (Step); a
	// store opens with DefaultHistory. Reads show what is kept whatever
	// the settings.
	SetHistory(h History)
	// Chain returns everything the vault holds of name, values included:
	// its current record, kept earlier versions, soft delete and highest
	// version; ErrNotFound when it holds nothing of it (a name whose
	// versions were all erased still has its highest version).
	Chain(ctx context.Context, name string) (Chain, error)
	// ListDeleted returns the soft-deleted names, sorted: each the
	// metadata of the version rm removed, with Touch.DeletedAt.
	ListDeleted(ctx context.Context) ([]Meta, error)
	// Chains returns every name's chain, values included, sorted by name,
	// in one consistent pass: what a backup reads. Names with no version
	// kept are included (their highest version).
	Chains(ctx context.Context) ([]Chain, error)
	// Changes returns the names whose state changed since the cursor
	// since ("": none; the answer is then the current cursor and no
	// changes), each once with its state now, in the order they changed,
	// at most limit of them (Truncated: ask again with the new cursor).
	// A cursor older than the vault can account for answers Reset; one
	// the vault never gave is ErrBadCursor.
	Changes(ctx context.Context, since string, limit int) (Changes, error)
	// Close releases the store's resources.
	Close() error
}
