package client

import "time"

// ApprovalState is the result of approve and approval: an approval's state
// (pending, approved, denied or expired), while pending when it expires,
// once approved who approved it and the scope granted.
type ApprovalState struct {
	Approval  string    `json:"approval"`
	State     string    `json:"state"`
	ExpiresAt time.Time `json:"expires_at"` // zero but while pending
	Approver  string    `json:"approver"`
	Scope     *Scope    `json:"scope"` // nil but once approved
}
