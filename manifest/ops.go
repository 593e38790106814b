package manifest

// FieldSet is a set of request fields, one bit each (the Field* constants).
type FieldSet uint64

// The request fields, one bit each, in the order of the field table.
const (
	FieldID FieldSet = 1 << iota
	FieldOp
	FieldRef
	FieldEnv
	FieldValue
	FieldActor
	FieldAttestation
	FieldText
	FieldStream
	FieldFinal
	FieldService
	FieldAction
	FieldMethod
	FieldPath
	FieldQuery
	FieldHeaders
	FieldBody
	FieldBodyB64
	FieldArgs
	FieldServices
	FieldStop
	FieldApproval
	FieldDecision
	FieldScope
	FieldApprover
	FieldGrant
	FieldAll
	FieldVersion
	FieldIfVersion
	FieldVersions
	FieldSince
	FieldDeleted
)

// Field describes one request field: its name, its bit, its cap in bytes
// (and its floor, when sent), and whether every op accepts it. Raw fields
// take any JSON value, kept as sent (id); Bool fields take true or false
// (final); Int fields take a JSON integer from Min to Max (their bounds,
// not bytes: version, if_version); the others are strings. The
// request schema's properties are written from this table (fromops.go),
// and each client sends the fields it lists: a new field is a row here.
type Field struct {
	Name   string
	Bit    FieldSet
	Max    int
	Min    int // the fewest bytes it has when sent: 1 for a value to store
	Raw    bool
	Bool   bool
	Int    bool // a JSON integer from Min to Max
	Common bool // every op accepts it: it is neither required nor refused by any
	Secret bool // a value or a credential: never kept past its request
}

// requestFields is the table of request fields. Nothing writes it; it is
// read through RequestFields and RequestField.
var requestFields = [...]Field{
	{Name: "id", Bit: FieldID, Max: MaxID, Raw: true, Common: true},
	{Name: "op", Bit: FieldOp, Max: MaxOp, Common: true},
	{Name: "ref", Bit: FieldRef, Max: MaxRef},
	{Name: "env", Bit: FieldEnv, Max: MaxSegment, Common: true},
	{Name: "value", Bit: FieldValue, Max: MaxValue, Min: 1, Secret: true},
	{Name: "actor", Bit: FieldActor, Max: MaxActor, Common: true},
	{Name: "attestation", Bit: FieldAttestation, Max: MaxAttestation, Common: true, Secret: true},
	// text is what scrub redacts: it may hold a value, so it is kept no
	// longer than a value is. The line cap bounds it.
	{Name: "text", Bit: FieldText, Max: MaxLine, Secret: true},
	{Name: "stream", Bit: FieldStream, Max: MaxStream, Min: 1},
	{Name: "final", Bit: FieldFinal, Bool: true},
	// The fields of a use (http, exec, proxy: SPEC §13). They name what
	// to do, never where: the destination, the command and the
	// credential come from the config. A body is the caller's data,
	// kept no longer than its request.
	{Name: "service", Bit: FieldService, Max: MaxName, Min: 1},
	{Name: "action", Bit: FieldAction, Max: MaxName, Min: 1},
	{Name: "method", Bit: FieldMethod, Max: MaxMethod, Min: 1},
	{Name: "path", Bit: FieldPath, Max: MaxPath, Min: 1},
	{Name: "query", Bit: FieldQuery, Max: MaxQuery, Raw: true},
	{Name: "headers", Bit: FieldHeaders, Max: MaxHeaders, Raw: true},
	{Name: "body", Bit: FieldBody, Max: MaxBody, Secret: true},
	{Name: "body_b64", Bit: FieldBodyB64, Max: maxBodyB64, Secret: true},
	{Name: "args", Bit: FieldArgs, Max: MaxArgs, Raw: true},
	{Name: "services", Bit: FieldServices, Max: MaxServices, Raw: true},
	{Name: "stop", Bit: FieldStop, Bool: true},
	// The fields of grants and approvals (SPEC §14): the approval a
	// retried request carries, or that approve and approval name; a
	// decision relayed by the host, its scope and who made it; and what
	// revoke closes.
	{Name: "approval", Bit: FieldApproval, Max: MaxApprovalID, Min: 1},
	{Name: "decision", Bit: FieldDecision, Max: MaxDecision, Min: 1},
	{Name: "scope", Bit: FieldScope, Max: MaxScope, Raw: true},
	{Name: "approver", Bit: FieldApprover, Max: MaxActor, Min: 1},
	{Name: "grant", Bit: FieldGrant, Max: MaxGrantID, Min: 1},
	{Name: "all", Bit: FieldAll, Bool: true},
	// The fields of versions and history (SPEC §11): the version a get
	// reads or a rollback writes again, the version a write is
	// conditional on (0: no current record), the versions destroy
	// erases, the cursor changes continues from, and whether list shows
	// soft-deleted names.
	{Name: "version", Bit: FieldVersion, Int: true, Min: 1, Max: MaxVersion},
	{Name: "if_version", Bit: FieldIfVersion, Int: true, Max: MaxVersion},
	{Name: "versions", Bit: FieldVersions, Max: MaxVersionsBytes, Raw: true},
	{Name: "since", Bit: FieldSince, Max: MaxCursor, Min: 1},
	{Name: "deleted", Bit: FieldDeleted, Bool: true},
}

// RequestFields returns the table of request fields, a fresh copy each call.
func RequestFields() []Field {
	t := requestFields
	return t[:]
}

// RequestField returns the request field named name, and whether there is
// one. Keys match exactly: "REF" is no field.
func RequestField(name string) (Field, bool) {
	for _, f := range requestFields {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// Names returns the names of the fields in s, in the order of the table.
func (s FieldSet) Names() []string { return s.namesIn(requestFields[:]) }

// namesIn returns the names of the fields of table in s, in its order.
func (s FieldSet) namesIn(table []Field) []string {
	var names []string
	for _, f := range table {
		if s&f.Bit != 0 {
			names = append(names, f.Name)
		}
	}
	return names
}

// commonFields is every field each op accepts.
func commonFields() FieldSet { return commonIn(requestFields[:]) }

// commonIn is every field of table each op accepts.
func commonIn(table []Field) FieldSet {
	var s FieldSet
	for _, f := range table {
		if f.Common {
			s |= f.Bit
		}
	}
	return s
}

// OpSpec describes one served op: the request fields it takes and the steps
// of the protocol it goes through. It is the one place these facts are
// written: serve's decoding and grouping, validation in ops, the PDP gate,
// the schemas and the manifest op all read it, and a request carries its
// op's row from the moment the op is known.
type OpSpec struct {
	Name        string
	Needs       FieldSet // fields it requires besides the common ones
	Accepts     FieldSet // fields it takes when sent, besides the common ones
	ConsultsPDP bool     // serve asks the PDP before running it
	Meta        bool     // protocol meta-op: skips guardrails and the PDP, never opens a vault
	Writes      bool     // changes one record: prepared, audited, then committed
	// Session: answered from what the serve session itself holds (scrub:
	// the values it released; proxy: its listener); skips guardrails and
	// the PDP, never opens a vault, and is audited once it has run.
	Session bool
	// Use: uses a credential on the caller's behalf (http, exec) and
	// answers only the outcome, scrubbed. It runs beside the requests
	// around it, at most MaxUses in flight in a session.
	Use bool
}

// Governed reports whether o is an op guardrails and the PDP govern: one
// that reaches a vault, neither a meta-op nor a session op.
func (o OpSpec) Governed() bool { return !o.Meta && !o.Session }

// opTable is the table of served ops, in the order the manifest lists them.
// Nothing writes it; it is read through Ops and Op.
var opTable = [...]OpSpec{
	{Name: "get", Needs: FieldRef, Accepts: FieldVersion | FieldApproval, ConsultsPDP: true},
	{Name: "put", Needs: FieldRef | FieldValue, Accepts: FieldIfVersion | FieldApproval, ConsultsPDP: true, Writes: true},
	{Name: "rm", Needs: FieldRef, Accepts: FieldIfVersion | FieldApproval, ConsultsPDP: true, Writes: true},
	{Name: "rotate", Needs: FieldRef | FieldValue, Accepts: FieldIfVersion | FieldApproval, ConsultsPDP: true, Writes: true},
	{Name: "list", Accepts: FieldDeleted | FieldApproval, ConsultsPDP: true},
	{Name: "check", Accepts: FieldApproval, ConsultsPDP: true},
	{Name: "manifest", Meta: true},
	{Name: "shutdown", Meta: true},
	{Name: "scrub", Needs: FieldText, Accepts: FieldStream | FieldFinal, Session: true},
	{Name: "http", Needs: FieldService | FieldMethod | FieldPath, Accepts: FieldQuery | FieldHeaders | FieldBody | FieldBodyB64 | FieldApproval, ConsultsPDP: true, Use: true},
	{Name: "exec", Needs: FieldAction, Accepts: FieldArgs | FieldApproval, ConsultsPDP: true, Use: true},
	{Name: "proxy", Accepts: FieldServices | FieldStop, Session: true},
	{Name: "revoke", Accepts: FieldGrant | FieldRef | FieldAll, Session: true},
	{Name: "approve", Needs: FieldApproval | FieldDecision | FieldApprover, Accepts: FieldScope, Session: true},
	{Name: "approval", Needs: FieldApproval, Session: true},
	// Versions and history (SPEC §11).
	{Name: "history", Needs: FieldRef, Accepts: FieldApproval, ConsultsPDP: true},
	{Name: "rollback", Needs: FieldRef | FieldVersion, Accepts: FieldIfVersion | FieldApproval, ConsultsPDP: true, Writes: true},
	{Name: "undelete", Needs: FieldRef, Accepts: FieldIfVersion | FieldApproval, ConsultsPDP: true, Writes: true},
	{Name: "destroy", Needs: FieldRef, Accepts: FieldVersions | FieldApproval, ConsultsPDP: true, Writes: true},
	{Name: "changes", Accepts: FieldSince | FieldApproval, ConsultsPDP: true},
}

// Ops returns the table of served ops, a fresh copy each call.
func Ops() []OpSpec {
	t := opTable
	return t[:]
}

// Op returns the served op named name, and whether there is one.
func Op(name string) (OpSpec, bool) {
	for _, o := range opTable {
		if o.Name == name {
			return o, true
		}
	}
	return OpSpec{}, false
}

// Takes returns every field o accepts: the common ones, those it needs and
// those it accepts when sent. A field outside it is refused.
func (o OpSpec) Takes() FieldSet { return commonFields() | o.Needs | o.Accepts }

// Required returns the request fields o needs besides "op".
func (o OpSpec) Required() []string { return o.Needs.Names() }

// Optional returns the request fields o accepts besides "op" and those it
// requires.
func (o OpSpec) Optional() []string { return o.optionalIn(requestFields[:]) }

// optionalIn is Optional over the field table table.
func (o OpSpec) optionalIn(table []Field) []string {
	return ((commonIn(table) | o.Accepts) &^ o.Needs &^ FieldOp).namesIn(table)
}

// CLIOnly lists the verbs that exist only as single-shot CLI commands:
// every verb of the CLI but serve and the ops serve has (cmd/arca's tests
// hold this list to its verbs).
func CLIOnly() []string {
	return []string{"run", "env", "deploy", "init", "ui", "migrate", "schema", "vault",
		"export", "audit", "status", "identity", "completion", "version", "mcp"}
}
