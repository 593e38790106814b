package manifest

// OpSpec describes one served op: the request fields it takes and the steps
// of the protocol it goes through. It is the one place these facts are
// written: serve's request check, validation in ops, the PDP gate and the
// manifest op all read it.
type OpSpec struct {
	Name        string
	TakesRef    bool // "ref" is required; on an op without it, refused
	TakesValue  bool // "value" is required; on an op without it, refused
	ConsultsPDP bool // serve asks the PDP before running it
	Meta        bool // protocol meta-op: skips guardrails and the PDP, never opens a vault
}

// opTable is the table of served ops, in the order the manifest lists them.
// Nothing writes it; it is read through Ops and Op.
var opTable = [...]OpSpec{
	{Name: "get", TakesRef: true, ConsultsPDP: true},
	{Name: "put", TakesRef: true, TakesValue: true, ConsultsPDP: true},
	{Name: "rm", TakesRef: true, ConsultsPDP: true},
	{Name: "rotate", TakesRef: true, TakesValue: true, ConsultsPDP: true},
	{Name: "list", ConsultsPDP: true},
	{Name: "check", ConsultsPDP: true},
	{Name: "manifest", Meta: true},
	{Name: "shutdown", Meta: true},
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

// Required returns the request fields o needs besides "op".
func (o OpSpec) Required() []string {
	var req []string
	if o.TakesRef {
		req = append(req, "ref")
	}
	if o.TakesValue {
		req = append(req, "value")
	}
	return req
}

// Optional returns the request fields o accepts besides "op" and those it
// requires: the same for every op.
func (o OpSpec) Optional() []string {
	return []string{"id", "env", "actor", "attestation"}
}

// CLIOnly lists the verbs that exist only as single-shot CLI commands:
// every verb of the CLI but serve and the ops serve has (cmd/arca's tests
// hold this list to its verbs).
func CLIOnly() []string {
	return []string{"run", "env", "deploy", "init", "ui", "migrate", "schema", "vault",
		"export", "audit", "status", "identity", "completion", "version"}
}
