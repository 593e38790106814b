package ops

import (
	"bytes"
	"encoding/json"

	"github.com/arca-secrets/arca/internal/scrub"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/vault"
)

// Request is one operation as asked for. A door that decodes requests
// (serve) fills it field by field with Set, which also notes that the field
// was sent, empty or not; a door that builds one (the CLI) sets its fields
// directly, and a field it leaves empty counts as not sent.
type Request struct {
	ID          json.RawMessage // echoed into the audit event; nil from the CLI
	Op          string
	Ref         string
	Env         string // the per-request env; a ref's pin wins over it
	Value       vault.Secret
	Actor       string
	Attestation string
	// Client is the name an MCP client gave for itself (arca mcp sets
	// it; no other door does): it goes to the PDP and the audit event
	// beside the actor. It is checked as an actor claim is.
	Client string
	// Dest says where the value of a successful get goes, as the message of
	// its audit event ("to DB_PASSWORD"; arca deploy: "for target NAME
	// (PATH)"): arca run, arca env and arca deploy set it, serve never does.
	// It names a destination, never a value; other ops and failed gets
	// ignore it.
	Dest string
	// Text, Stream and Final are scrub's: the text to redact (it may hold
	// a value: never kept past its request), the stream it continues,
	// and whether it ends that stream (Final is true unless sent false).
	Text   string
	Stream string
	Final  bool
	// The fields of a use (http, exec, proxy): what to do, never where.
	// Query, Headers, Args and Services are JSON as sent, checked by the
	// use that takes them; Body is the caller's data, never kept past
	// its request.
	Service, Action, Method, Path  string
	Query, Headers, Args, Services []byte
	Body, BodyB64                  string
	Stop                           bool
	// The fields of grants and approvals (SPEC §14): the approval a
	// request is retried with, or that approve and approval name; a
	// relayed decision, its scope (JSON as sent) and its approver; the
	// grant revoke closes, or all of them.
	Approval, Decision, Approver, Grant string
	Scope                               []byte
	All                                 bool
	// The fields of versions and history (SPEC §11): the version get
	// reads or rollback writes again (0: none), the version a write is
	// conditional on (nil: none; 0: no current record), the versions
	// destroy erases (nil: all of them; serve sends them as JSON, which
	// validation reads), the cursor changes continues from, and whether
	// list shows soft-deleted names.
	Version   uint64
	IfVersion *uint64
	Versions  []uint64
	Since     string
	Deleted   bool
	// Page narrows a list to a window of the names a pattern picks, for
	// a caller that pages through more names than one list holds (arca
	// ui). Nil: the whole list, as the wire asks for it; serve never sets
	// it.
	Page     *ListPage
	versions []byte // destroy's versions as serve decoded them, JSON

	// Turn is the request's turn (Service.Turn) when it is a read run at
	// once with others: its grant is settled in that order. 0: none.
	Turn uint64

	// Scrub holds the values the session released (serve's): a use's
	// outcome is scrubbed against them and its credentials. Nil: against
	// its credentials alone.
	Scrub *scrub.Set

	sent manifest.FieldSet // the fields Set was given
}

// ListPage is a window of a list: the names Match picks (a glob over
// ns/name when it holds *, ? or [; else a substring of ns/name; "" picks
// all), only the soft-deleted ones when DeletedOnly (with the request's
// Deleted), Offset of them skipped, then Limit at most (1 to
// manifest.MaxListRows; 0 is MaxListRows).
type ListPage struct {
	Match         string
	DeletedOnly   bool
	Offset, Limit int
}

// Set sets the string field f of r to s and notes that it was sent. A raw
// field (id) is set with SetRaw.
func (r *Request) Set(f manifest.Field, s string) {
	r.sent |= f.Bit
	switch f.Bit {
	case manifest.FieldOp:
		r.Op = s
	case manifest.FieldRef:
		r.Ref = s
	case manifest.FieldEnv:
		r.Env = s
	case manifest.FieldValue:
		r.Value = vault.NewSecret([]byte(s))
	case manifest.FieldActor:
		r.Actor = s
	case manifest.FieldAttestation:
		r.Attestation = s
	case manifest.FieldText:
		r.Text = s
	case manifest.FieldStream:
		r.Stream = s
	case manifest.FieldService:
		r.Service = s
	case manifest.FieldAction:
		r.Action = s
	case manifest.FieldMethod:
		r.Method = s
	case manifest.FieldPath:
		r.Path = s
	case manifest.FieldBody:
		r.Body = s
	case manifest.FieldBodyB64:
		r.BodyB64 = s
	case manifest.FieldApproval:
		r.Approval = s
	case manifest.FieldDecision:
		r.Decision = s
	case manifest.FieldApprover:
		r.Approver = s
	case manifest.FieldGrant:
		r.Grant = s
	case manifest.FieldSince:
		r.Since = s
	}
}

// SetInt sets the integer field f of r (version, if_version) to v and
// notes that it was sent.
func (r *Request) SetInt(f manifest.Field, v uint64) {
	r.sent |= f.Bit
	switch f.Bit {
	case manifest.FieldVersion:
		r.Version = v
	case manifest.FieldIfVersion:
		r.IfVersion = &v
	}
}

// SetBool sets the boolean field f of r (final) to v and notes that it
// was sent.
func (r *Request) SetBool(f manifest.Field, v bool) {
	r.sent |= f.Bit
	switch f.Bit {
	case manifest.FieldFinal:
		r.Final = v
	case manifest.FieldStop:
		r.Stop = v
	case manifest.FieldAll:
		r.All = v
	case manifest.FieldDeleted:
		r.Deleted = v
	}
}

// IsFinal reports whether r ends its scrub stream: unless final was sent
// false.
func (r *Request) IsFinal() bool { return r.sent&manifest.FieldFinal == 0 || r.Final }

// SetValue sets r's value to v and notes that it was sent, empty or not:
// what a door that reads a value (the CLI, from stdin) sets it with.
func (r *Request) SetValue(v vault.Secret) {
	r.sent |= manifest.FieldValue
	r.Value = v
}

// SetRaw sets the raw field f of r to the JSON value b, as sent: id as
// b itself, the others (query, headers, args, services, versions) as a
// copy, since a use outlives the line it came in.
func (r *Request) SetRaw(f manifest.Field, b []byte) {
	r.sent |= f.Bit
	switch f.Bit {
	case manifest.FieldID:
		r.ID = b
	case manifest.FieldQuery:
		r.Query = bytes.Clone(b)
	case manifest.FieldHeaders:
		r.Headers = bytes.Clone(b)
	case manifest.FieldArgs:
		r.Args = bytes.Clone(b)
	case manifest.FieldServices:
		r.Services = bytes.Clone(b)
	case manifest.FieldScope:
		r.Scope = bytes.Clone(b)
	case manifest.FieldVersions:
		r.versions = bytes.Clone(b)
	}
}

// Sent returns the fields r carries: those Set was given, and those set
// directly to something other than their zero value.
func (r *Request) Sent() manifest.FieldSet { return r.sent | r.filled() }

// filled returns the fields of r that are not their zero value.
func (r *Request) filled() manifest.FieldSet {
	var s manifest.FieldSet
	for _, f := range [...]struct {
		bit manifest.FieldSet
		set bool
	}{
		{manifest.FieldID, r.ID != nil},
		{manifest.FieldOp, r.Op != ""},
		{manifest.FieldRef, r.Ref != ""},
		{manifest.FieldEnv, r.Env != ""},
		{manifest.FieldValue, r.Value.Len() > 0},
		{manifest.FieldActor, r.Actor != ""},
		{manifest.FieldAttestation, r.Attestation != ""},
		{manifest.FieldText, r.Text != ""},
		{manifest.FieldStream, r.Stream != ""},
		{manifest.FieldFinal, r.Final},
		{manifest.FieldService, r.Service != ""},
		{manifest.FieldAction, r.Action != ""},
		{manifest.FieldMethod, r.Method != ""},
		{manifest.FieldPath, r.Path != ""},
		{manifest.FieldQuery, r.Query != nil},
		{manifest.FieldHeaders, r.Headers != nil},
		{manifest.FieldBody, r.Body != ""},
		{manifest.FieldBodyB64, r.BodyB64 != ""},
		{manifest.FieldArgs, r.Args != nil},
		{manifest.FieldServices, r.Services != nil},
		{manifest.FieldStop, r.Stop},
		{manifest.FieldApproval, r.Approval != ""},
		{manifest.FieldDecision, r.Decision != ""},
		{manifest.FieldScope, r.Scope != nil},
		{manifest.FieldApprover, r.Approver != ""},
		{manifest.FieldGrant, r.Grant != ""},
		{manifest.FieldAll, r.All},
		{manifest.FieldVersion, r.Version != 0},
		{manifest.FieldIfVersion, r.IfVersion != nil},
		{manifest.FieldVersions, r.Versions != nil || r.versions != nil},
		{manifest.FieldSince, r.Since != ""},
		{manifest.FieldDeleted, r.Deleted},
	} {
		if f.set {
			s |= f.bit
		}
	}
	return s
}
