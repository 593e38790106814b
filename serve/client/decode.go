package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/manifest"
)

// Error is a request serve refused or failed: the wire's code and
// message, the cause its details name (upstream_failed: the step of a use
// that failed, one of the manifest's use capability's causes; "" when it
// names none; denied: the grant or approval rule that denied it), and the
// policy verdict when the PDP gave one. An approval_required one is
// returned as an *ApprovalRequired wrapping it.
type Error struct {
	Code    string  `json:"code"`
	Message string  `json:"message"`
	Cause   string  `json:"-"`
	Policy  *Policy `json:"-"`
	// CurrentVersion is details.current_version of a conflict: the
	// version that is current (0: none), so that a caller can read again
	// and retry with it.
	CurrentVersion uint64 `json:"-"`
	// approval is details.approval, which verdict makes an
	// *ApprovalRequired of.
	approval *Approval
}

func (e *Error) Error() string { return "arca serve: " + e.Code + ": " + e.Message }

// UnmarshalJSON reads an error object, the cause from its details.
func (e *Error) UnmarshalJSON(b []byte) error {
	var w struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Details struct {
			Cause          string    `json:"cause"`
			Approval       *Approval `json:"approval"`
			CurrentVersion uint64    `json:"current_version"`
		} `json:"details"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	e.Code, e.Message, e.Cause, e.approval = w.Code, w.Message, w.Details.Cause, w.Details.Approval
	e.CurrentVersion = w.Details.CurrentVersion
	return nil
}

// Policy is a PDP verdict.
type Policy = audit.Policy

// sent is what a request sent that its response echoes: its id, and the
// strings its result most likely repeats, which the fast path then reuses
// rather than allocate again (the ref of a request whose ref names no env,
// the env it names or the default one).
type sent struct {
	id       []byte
	ref, env string
}

// decode reads the response line to request req into result: by the fast
// path when the line is a shape it knows, else by encoding/json.
func decode[T any](line []byte, req sent, result *T) error {
	if handled, err := fast(line, req, result); handled {
		return err
	}
	return slow(line, req.id, result)
}

// slow decodes with encoding/json: any line that is JSON at all. It
// decodes into a result of its own, so that the caller's does not escape
// to the heap on the fast path.
func slow[T any](line, want []byte, result *T) error {
	r := new(T)
	defer func() { *result = *r }()
	var resp struct {
		ID     json.RawMessage `json:"id"`
		OK     bool            `json:"ok"`
		Result *T              `json:"result"`
		Error  *Error          `json:"error"`
		Policy *Policy         `json:"policy"`
	}
	resp.Result = r
	if err := json.Unmarshal(line, &resp); err != nil {
		return notJSON(err, len(line))
	}
	if resp.OK && resp.Policy != nil {
		withPolicy(r, resp.Policy)
	}
	return verdict(resp.ID, want, resp.OK, resp.Error, resp.Policy)
}

// verdict is what a decoded response means for request want. fast and slow
// share it: they can differ only in what they decoded, and the
// differential test holds them to the same.
func verdict(id, want []byte, ok bool, e *Error, p *Policy) error {
	if string(id) != string(want) && !headAnswer(id, ok) {
		return outOfStep(id, want)
	}
	if !ok {
		if e == nil {
			return errors.New("client: a failed response without an error")
		}
		e.Policy = p
		if e.Code == string(manifest.ApprovalRequired) && e.approval != nil {
			return &ApprovalRequired{Approval: *e.approval, Err: e}
		}
		return e
	}
	return nil
}

// errOutOfStep marks the errors of a response that answers another request
// than the one at the head of the queue: the streams are out of step, and
// the session ends (see breakWire).
var errOutOfStep = errors.New("the wire is out of step")

func outOfStep(id, want []byte) error {
	return fmt.Errorf("client: the response to request %s carries %s: %w", want, describeID(id, want), errOutOfStep)
}

// headAnswer reports whether a response whose id is not the head's is the
// head's all the same: serve answers a line whose id it could not read
// (not JSON, over the line cap, nested too deep, a duplicate id) with
// "id":null and "ok":false, in its place.
func headAnswer(id []byte, ok bool) bool { return !ok && string(id) == "null" }

// stepCheck is the reader's check that a response line answers request
// want, before it hands the line over: a line out of step ends the session
// whether its call still waits or was given up. Serve's own layout, the id
// first, is read by a comparison; any other as encoding/json reads it, as
// decode will. A line that is not JSON is left to decode, which fails its
// call.
func stepCheck(line, want []byte) error {
	if n := len(want); len(line) > 6+n && string(line[:6]) == `{"id":` && string(line[6:6+n]) == string(want) && line[6+n] == ',' {
		return nil
	}
	var env struct {
		ID json.RawMessage `json:"id"`
		OK json.RawMessage `json:"ok"`
	}
	if json.Unmarshal(line, &env) != nil || string(env.ID) == string(want) {
		return nil
	}
	if failed := string(env.OK) == "false"; headAnswer(env.ID, !failed) {
		return nil
	}
	return outOfStep(env.ID, want)
}

// describeID names the id of a response out of step. It is quoted only
// when it is a number near want, one this client may have sent: a line
// out of step may hold anything, a value too, a number among them.
func describeID(id, want []byte) string {
	switch n, err := strconv.ParseUint(string(id), 10, 64); {
	case len(id) == 0:
		return "no id"
	case string(id) == "null":
		return "id null"
	case err == nil && near(n, want):
		return "id " + string(id)
	}
	return fmt.Sprintf("an id of %d bytes", len(id))
}

func near(n uint64, want []byte) bool {
	w, err := strconv.ParseUint(string(want), 10, 64)
	return err == nil && max(n, w)-min(n, w) <= 1<<16
}

// notJSON is the error of a line encoding/json refused. Its own message is
// not used: it quotes bytes of the line (a character, a number, a time),
// and the line may hold a value.
func notJSON(err error, n int) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return fmt.Errorf("client: a response (%d bytes) that is not valid JSON (at byte %d)", n, syntax.Offset)
	case errors.As(err, &typ):
		return fmt.Errorf("client: a response (%d bytes) with a field that is not a %s", n, typ.Type)
	}
	return fmt.Errorf("client: a response (%d bytes) with a field the client cannot read", n)
}
