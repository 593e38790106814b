package manifest

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestOpTable: the table is well formed. Names are unique and plain; a
// meta-op takes no ref or value and skips the PDP; every other op consults
// it (SPEC §9: every op that can materialize); an op that takes a value
// takes the ref it is stored under; Op finds every row and nothing else.
func TestOpTable(t *testing.T) {
	ops := Ops()
	if len(ops) == 0 {
		t.Fatal("the op table is empty")
	}
	name := regexp.MustCompile(`^[a-z]+$`)
	seen := map[string]bool{}
	for _, o := range ops {
		switch {
		case !name.MatchString(o.Name):
			t.Errorf("op %q: name is not lowercase letters", o.Name)
		case len(o.Name) > MaxOp:
			t.Errorf("op %q: name is over MaxOp", o.Name)
		case seen[o.Name]:
			t.Errorf("op %q is in the table twice", o.Name)
		}
		seen[o.Name] = true
		if o.Meta && (o.Needs != 0 || o.Accepts != 0 || o.ConsultsPDP || o.Writes) {
			t.Errorf("meta-op %q takes a field of its own, consults the PDP or writes", o.Name)
		}
		if o.Governed() != o.ConsultsPDP {
			t.Errorf("op %q: consults the PDP %v, but reaches a vault %v", o.Name, o.ConsultsPDP, o.Governed())
		}
		if o.Meta && o.Session || o.Session && o.Writes {
			t.Errorf("op %q: a session op is neither a meta-op nor a write", o.Name)
		}
		if o.Takes()&FieldValue != 0 && o.Takes()&FieldRef == 0 {
			t.Errorf("op %q takes a value but no ref", o.Name)
		}
		if o.Writes && o.Needs&FieldRef == 0 {
			t.Errorf("op %q writes but needs no ref", o.Name)
		}
		if o.Needs&o.Accepts != 0 || (o.Needs|o.Accepts)&commonFields() != 0 {
			t.Errorf("op %q: Needs %v and Accepts %v overlap each other or the common fields", o.Name, o.Needs.Names(), o.Accepts.Names())
		}
		if got, ok := Op(o.Name); !ok || got != o {
			t.Errorf("Op(%q) = %+v, %v; want the table's row %+v", o.Name, got, ok, o)
		}
	}
	for _, n := range []string{"", "GET", "get ", "run", "nope"} {
		if o, ok := Op(n); ok {
			t.Errorf("Op(%q) found %+v", n, o)
		}
	}
	for _, v := range CLIOnly() {
		if _, ok := Op(v); ok {
			t.Errorf("CLI-only verb %q is also a served op", v)
		}
	}
	if c := CLIOnly(); len(slices.Compact(slices.Sorted(slices.Values(c)))) != len(c) {
		t.Errorf("CLIOnly lists a verb twice: %q", c)
	}
}

// TestOpTableSpec: the table says what SPEC §5 says of each op.
func TestOpTableSpec(t *testing.T) {
	want := []OpSpec{
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
		{Name: "history", Needs: FieldRef, Accepts: FieldApproval, ConsultsPDP: true},
		{Name: "rollback", Needs: FieldRef | FieldVersion, Accepts: FieldIfVersion | FieldApproval, ConsultsPDP: true, Writes: true},
		{Name: "undelete", Needs: FieldRef, Accepts: FieldIfVersion | FieldApproval, ConsultsPDP: true, Writes: true},
		{Name: "destroy", Needs: FieldRef, Accepts: FieldVersions | FieldApproval, ConsultsPDP: true, Writes: true},
		{Name: "changes", Accepts: FieldSince | FieldApproval, ConsultsPDP: true},
	}
	if got := Ops(); !slices.Equal(got, want) {
		t.Errorf("Ops() =\n%+v\nwant\n%+v", got, want)
	}
}

// TestOpsIsACopy: what a caller does to Ops' slice does not reach the table.
func TestOpsIsACopy(t *testing.T) {
	a := Ops()
	a[0].Name, a[0].Needs = "changed", 0
	if b := Ops(); b[0].Name == "changed" || b[0].Needs == 0 {
		t.Errorf("changing Ops()'s result changed the table: %+v", b[0])
	}
	if _, ok := Op("changed"); ok {
		t.Error("changing Ops()'s result changed what Op finds")
	}
}

// TestRequestFields: the field table is well formed: names plain and
// unique, one bit each and every bit named, a cap on each and a floor
// under it, and RequestField
// finds every row and nothing else.
func TestRequestFields(t *testing.T) {
	name := regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	var bits FieldSet
	for _, f := range RequestFields() {
		switch {
		case !name.MatchString(f.Name):
			t.Errorf("field %q: name is not lowercase letters and underscores", f.Name)
		case f.Bit == 0 || f.Bit&(f.Bit-1) != 0 || bits&f.Bit != 0:
			t.Errorf("field %q: bit %b is not a bit of its own", f.Name, f.Bit)
		case f.Max <= 0 && !f.Bool, f.Bool && (f.Max != 0 || f.Raw || f.Secret), f.Int && (f.Raw || f.Bool || f.Secret):
			t.Errorf("field %q has no cap, or is a boolean with one", f.Name)
		case f.Min < 0 || f.Min > f.Max || (f.Raw && f.Min != 0):
			t.Errorf("field %q: floor %d is outside 0..%d, or on a raw field", f.Name, f.Min, f.Max)
		}
		bits |= f.Bit
		if got, ok := RequestField(f.Name); !ok || got != f {
			t.Errorf("RequestField(%q) = %+v, %v; want the table's row", f.Name, got, ok)
		}
	}
	if bits != FieldDeleted<<1-1 {
		t.Errorf("the table's bits are %b: a Field constant has no row", bits)
	}
	for _, n := range []string{"", "REF", "Ref", "ref ", "nope"} {
		if f, ok := RequestField(n); ok {
			t.Errorf("RequestField(%q) found %+v", n, f)
		}
	}
}

// TestOpFields: Required and Optional follow the table: the common fields
// are optional on every op, and an op's own fields are required or
// optional as its row says.
func TestOpFields(t *testing.T) {
	want := map[string][]string{"put": {"ref", "value"}, "rotate": {"ref", "value"}, "get": {"ref"}, "rm": {"ref"}, "scrub": {"text"},
		"http": {"service", "method", "path"}, "exec": {"action"}, "approve": {"approval", "decision", "approver"}, "approval": {"approval"},
		"history": {"ref"}, "rollback": {"ref", "version"}, "undelete": {"ref"}, "destroy": {"ref"}}
	own := map[string][]string{"get": {"approval", "version"}, "put": {"approval", "if_version"}, "rm": {"approval", "if_version"},
		"rotate": {"approval", "if_version"}, "list": {"approval", "deleted"},
		"check": {"approval"}, "scrub": {"stream", "final"}, "http": {"query", "headers", "body", "body_b64", "approval"},
		"exec": {"args", "approval"}, "proxy": {"services", "stop"}, "revoke": {"grant", "all"}, "approve": {"scope"},
		"history": {"approval"}, "rollback": {"approval", "if_version"}, "undelete": {"approval", "if_version"},
		"destroy": {"approval", "versions"}, "changes": {"approval", "since"}}
	for _, o := range Ops() {
		if got := o.Required(); !slices.Equal(got, want[o.Name]) {
			t.Errorf("%s: Required() = %q, want %q", o.Name, got, want[o.Name])
		}
		opt := o.Optional()
		common := []string{"id", "env", "actor", "attestation"}
		if o.Name == "revoke" {
			common = []string{"id", "ref", "env", "actor", "attestation"}
		}
		if !slices.Equal(opt, append(common, own[o.Name]...)) {
			t.Errorf("%s: Optional() = %q", o.Name, opt)
		}
		for _, f := range o.Required() {
			if slices.Contains(opt, f) {
				t.Errorf("%s: %q is both required and optional", o.Name, f)
			}
		}
	}
}

// TestOpTableMatchesSchemas: the request schema's op enum is the table, in
// order; it accepts exactly the ref and value each op takes; the results
// schema has a definition for every op and the audit event an event name.
func TestOpTableMatchesSchemas(t *testing.T) {
	var names []any
	for _, o := range Ops() {
		names = append(names, o.Name)
	}
	if got, _ := dig(schemaDoc(t, "request"), "properties", "op", "enum").([]any); !slices.Equal(got, names) {
		t.Errorf("request.json op enum is %v, want the table's %v", got, names)
	}
	request := published(t, "request")
	for _, o := range Ops() {
		for _, withRef := range []bool{false, true} {
			for _, withValue := range []bool{false, true} {
				req := map[string]any{"op": o.Name}
				if withRef {
					req["ref"] = "arca://app/db"
				}
				if withValue {
					req["value"] = "v"
				}
				for _, f := range RequestFields() {
					if o.Needs&f.Bit != 0 && f.Bit&(FieldRef|FieldValue) == 0 {
						req[f.Name] = sampleField(f.Name)
					}
				}
				err := request.Validate(req)
				takesRef := (o.Needs|o.Accepts)&FieldRef != 0
				want := (withRef == (o.Needs&FieldRef != 0) || withRef && takesRef) && withValue == (o.Needs&FieldValue != 0)
				if (err == nil) != want {
					t.Errorf("request.json on %v: valid %v, want %v (%v)", req, err == nil, want, err)
				}
			}
		}
		published(t, "result."+o.Name)
		if events, _ := dig(schemaDoc(t, "event"), "properties", "event", "enum").([]any); !slices.Contains(events, any(o.Name)) {
			t.Errorf("event.json has no event %q", o.Name)
		}
	}
	for _, v := range append(CLIOnly(), "nope") {
		if err := request.Validate(map[string]any{"op": v}); err == nil {
			t.Errorf("request.json accepts op %q", v)
		}
	}
}

func ExampleOp() {
	o, ok := Op("rotate")
	fmt.Println(ok, o.Writes, o.ConsultsPDP, o.Required(), o.Optional())
	// Output: true true true [ref value] [id env actor attestation approval if_version]
}

// sampleField is a well-formed value of the request field named name, for
// a schema test that sends each required field.
func sampleField(name string) any {
	switch name {
	case "version":
		return 1
	case "approval":
		return "ap_" + strings.Repeat("0", 32)
	case "decision":
		return "grant"
	}
	return "t"
}
