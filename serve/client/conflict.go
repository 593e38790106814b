package client

import "strconv"

// Conflict is the error of a write whose Request.IfVersion is not the
// name's current version (code conflict): nothing was written.
// CurrentVersion is serve's details.current_version, the version that is
// current (0: none, the name is not stored or is soft-deleted). Read again
// and write again with IfVersion set to what was read: a compare-and-set
// (examples/cas runs the loop). errors.As finds the *Error beneath it too.
type Conflict struct {
	CurrentVersion uint64
	Err            *Error // serve's error
}

func (e *Conflict) Error() string {
	return e.Err.Error() + " (current version " + strconv.FormatUint(e.CurrentVersion, 10) + ")"
}

// Unwrap is serve's *Error.
func (e *Conflict) Unwrap() error { return e.Err }
