// Package manifest holds arca's declarative tables: the error codes, the exit
// statuses they map to, the limits every input is held to, and the operations
// with their fields. The ops layer enforces these tables; serve and the CLI
// publish and bind to them. Nothing here has state or side effects but the
// version a release build stamps in (version.go).
//
// Limits (bytes unless noted):
//
//	MaxOp           64       the op field
//	MaxRef          1 KiB    a ref, checked before it is parsed
//	MaxSegment      128      one ref segment (env, ns or name), characters
//	MaxValue        64 KiB   a secret value
//	MaxActor        256      a claimed actor
//	MaxAttestation  64 KiB   an opaque identity claim
//	MaxID           4 KiB    a request id, serialized
//	MaxDepth        32       levels of arrays and objects open at once in a request, the request object included
//	MaxLine         4 MiB    one serve request line, without its newline
//	MaxListRows     10,000   records in one list result
//	MaxReads        64       reads one serve session runs at once, of those already in its input
//	MaxConfig       1 MiB    a configuration file
//	MaxStream       128      a scrub stream's name
//	MaxStreams      64       scrub streams a session holds open at once
//	MaxName         128      a service's or an action's name
//	MaxMethod       16       an http method
//	MaxPath         8 KiB    an http path
//	MaxQuery        16 KiB   an http query, serialized
//	MaxHeaders      16 KiB   an http request's headers, serialized
//	MaxBody         2 MiB    an http request body (body_b64: its base64, 4/3 of it)
//	MaxArgs         64 KiB   an action's extra arguments, serialized
//	MaxServices     4 KiB    the services a proxy serves, serialized
//	MaxUses         8        uses (http, exec) one serve session runs at once
//	MaxApprovalID   64       an approval's id
//	MaxGrantID      64       a grant's id
//	MaxDecision     16       an approve's decision
//	MaxScope        256      an approve's scope, serialized
//	MaxPending      20       approvals one serve session holds pending at once
//	MaxVersion      9,007,199,254,740,991 a version a request names (a number: 2^53-1, what every JSON client holds exactly)
//	MaxDestroy      100      versions one destroy names (a count)
//	MaxVersionsBytes 2 KiB   destroy's versions, serialized
//	MaxCursor       256      a changes cursor
//	MaxChanges      10,000   changes in one changes result (vault.MaxChanges)
//	MaxKeptVersions 100      the most max_versions a vault may keep (vault.MaxMaxVersions)
//
// A scrub stream unused for StreamIdle (60 s) is dropped by the next scrub
// request.
package manifest

import "time"

// Protocol is the serve wire protocol this build speaks.
const Protocol = "arca-serve/1"

// Limits, see the package doc.
const (
	MaxOp          = 64
	MaxRef         = 1 << 10
	MaxSegment     = 128
	MaxValue       = 64 << 10
	MaxActor       = 256
	MaxAttestation = 64 << 10
	MaxID          = 4 << 10
	MaxDepth       = 32
	MaxLine        = 4 << 20
	MaxListRows    = 10_000
	MaxReads       = 64
	MaxConfig      = 1 << 20
	MaxStream      = 128
	MaxStreams     = 64
	MaxName        = 128
	MaxMethod      = 16
	MaxPath        = 8 << 10
	MaxQuery       = 16 << 10
	MaxHeaders     = 16 << 10
	MaxBody        = 2 << 20
	MaxArgs        = 64 << 10
	MaxServices    = 4 << 10
	MaxUses        = 8
	MaxApprovalID  = 64
	MaxGrantID     = 64
	MaxDecision    = 16
	MaxScope       = 256
	MaxPending     = 20
	// The limits of versions and history (SPEC §11).
	MaxVersion       = 1<<53 - 1
	MaxDestroy       = 100
	MaxVersionsBytes = 2 << 10
	MaxCursor        = 256
	MaxChanges       = 10_000
	MaxKeptVersions  = 100
)

// ApprovalWait is how long an approval stays pending: one no human
// decided by then is expired, a deny (SPEC §14).
const ApprovalWait = 15 * time.Minute

// maxBodyB64 is the cap of body_b64: MaxBody bytes in base64.
const maxBodyB64 = (MaxBody + 2) / 3 * 4

// StreamIdle is how long a scrub stream may sit unused: a scrub request
// that finds one idle that long drops it, with the bytes it held back.
const StreamIdle = 60 * time.Second

// Code is a wire error code. Clients branch on it, never on message text.
type Code string

// The error codes, in the order of the checks that produce them.
const (
	BadRequest     Code = "bad_request"
	UnknownOp      Code = "unknown_op"
	Denied         Code = "denied"
	PDPUnreachable Code = "pdp_unreachable"
	NotFound       Code = "not_found"
	OpError        Code = "op_error"
	// UpstreamFailed: a use could not reach its service or run its
	// action to the end; details.cause says which step failed.
	UpstreamFailed Code = "upstream_failed"
	// ApprovalRequired: the PDP denied the request but a human may
	// approve it; details.approval names the approval to wait for, and
	// the request is retried with it (SPEC §14).
	ApprovalRequired Code = "approval_required"
	// Conflict: a write's if_version is not the current version, and
	// nothing was written; details.current_version is the current one
	// (0: none) (SPEC §11).
	Conflict Code = "conflict"
)

// Codes lists every error code.
func Codes() []Code {
	return []Code{BadRequest, UnknownOp, Denied, PDPUnreachable, NotFound, OpError, UpstreamFailed, ApprovalRequired, Conflict}
}

// CLI exit statuses.
const (
	ExitOK       = 0
	ExitOpError  = 1
	ExitUsage    = 2
	ExitDenied   = 3
	ExitNotFound = 4
	ExitConflict = 5 // SPEC §11: an if_version that named another version
)

// ExitStatus maps an error code to the CLI's exit status.
func ExitStatus(c Code) int {
	switch c {
	case BadRequest, UnknownOp:
		return ExitUsage
	case Denied, ApprovalRequired:
		return ExitDenied
	case NotFound:
		return ExitNotFound
	case Conflict:
		return ExitConflict
	default:
		return ExitOpError
	}
}
