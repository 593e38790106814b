package ops

import (
	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/manifest"
)

// Change is one audited step that is not a served op: a backup, a
// recipients change, a rekey, or one record of an import or an export. It
// keeps the order every op keeps (SPEC §8):
//
//   - a change is prepared, then audited (Audit, which writes and flushes
//     its ok event), and only then committed; should Audit fail, nothing
//     may be committed, and its error is ErrAudit's;
//   - should the commit then fail, Fail writes a second event for the same
//     op and env, outcome error, so the wire never claims a change that
//     did not land;
//   - a read hands out nothing before its event is written (Audit, or
//     Record for all but the last of many events, which Audit then flushes
//     with it).
//
// A step refused before it is audited (a guardrail, a bad argument) is
// failed with Fail alone. A Change is a value: it holds no vault and needs
// no ending.
type Change struct {
	s *Service
	c call
}

// Begin starts an audited change of op in env: ref names the record it
// touches ("ns/name"; "" for the whole vault) and message says what it does
// when the op and ref do not ("3 records to backup.arca"); both may be "".
func (s *Service) Begin(op, env, ref, message string) Change {
	return Change{s: s, c: call{op: op, env: env, ev: audit.Event{Op: op, Env: env, Ref: ref, Message: message}}}
}

// Audit writes the change's ok event, carrying version (0 for none), and
// flushes it out of any buffer: the change may be committed, or the value
// read handed out, once it returns nil. Its error is op_error wrapping
// ErrAudit.
func (ch Change) Audit(version uint64) error {
	return ch.s.recordCommit(&ch.c, version)
}

// Record writes the change's ok event like Audit, without flushing it: for
// a read whose value is not handed out yet, or for all but the last of a
// run of events that an Audit then flushes together.
func (ch Change) Record(version uint64) error {
	return ch.s.record(&ch.c, version)
}

// Fail audits err as the change's outcome (denied, bad_request, not_found
// or error, by err's code) and returns err; should that event not be
// written, it returns the op_error wrapping ErrAudit instead. After Audit,
// it is the second event of a change whose commit failed.
func (ch Change) Fail(err error) error {
	return ch.s.fail(&ch.c, err)
}

// auditError is the error for an audit event that could not be written.
func auditError(err error) error {
	return &Error{Code: manifest.OpError, Msg: "audit event could not be written: " + err.Error(), Err: ErrAudit}
}
