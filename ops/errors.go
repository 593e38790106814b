package ops

import (
	"errors"
	"fmt"
	"time"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/vault"
)

// Error is an ops failure carrying its wire code. Its message names what was
// wrong (a field, a cap, an env, a file) and never a secret value.
type Error struct {
	Code manifest.Code
	Msg  string
	Err  error // the cause, when callers may need to branch on it
	// Policy is the PDP's verdict when one was consulted for the request.
	Policy *audit.Policy
	// Cause names the step of a use that failed, for upstream_failed
	// (one of manifest.UpstreamCauses); "" otherwise.
	Cause string
	// Approval is the approval an approval_required error names (SPEC
	// §14): the request is retried with its id once a human decided.
	Approval *ApprovalDetails
}

// ApprovalDetails is details.approval of an approval_required error:
// the approval's id, what it is for in a human's words, the fingerprint
// of the request and when it expires undecided. Serve adds the url of its
// page, when it runs one.
type ApprovalDetails struct {
	ID          string
	Summary     string
	Fingerprint string
	ExpiresAt   time.Time
}

// ApprovalOf returns the approval an approval_required error names, nil
// when none.
func ApprovalOf(err error) *ApprovalDetails {
	var e *Error
	if errors.As(err, &e) {
		return e.Approval
	}
	return nil
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ErrAudit is the cause of a failure to write an audit event. Whoever sees
// it must stop: arca does not act unaudited.
var ErrAudit = errors.New("audit event not written")

// Errorf returns an *Error with code and a formatted message.
func Errorf(code manifest.Code, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// asError returns err as it is when an *Error is in its chain, else as an
// op_error carrying its text; nil stays nil.
func asError(err error) error {
	var e *Error
	if err == nil || errors.As(err, &e) {
		return err
	}
	return &Error{Code: manifest.OpError, Msg: err.Error(), Err: err}
}

// CodeOf returns err's wire code: that of an *Error in its chain, else op_error.
func CodeOf(err error) manifest.Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return manifest.OpError
}

// CauseOf returns the cause an upstream_failed error carries, "" when none.
func CauseOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Cause
	}
	return ""
}

// ConflictOf returns the current version a conflict error names
// (details.current_version: 0 when there is no current record), and
// whether err is one.
func ConflictOf(err error) (uint64, bool) {
	var ce *vault.ConflictError
	if CodeOf(err) == manifest.Conflict && errors.As(err, &ce) {
		return ce.Current, true
	}
	return 0, false
}
