package manifest

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestDocument: the manifest validates against its own result schema, lists
// the op table with "op" first among each op's required fields, and carries
// the runtime it was given.
func TestDocument(t *testing.T) {
	rt := Runtime{Envs: []string{"dev", "prod"}, DefaultEnv: "dev", PDPConfigured: true}
	b, err := Document(rt)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if err := closed(t, "result.manifest").Validate(inst); err != nil {
		t.Errorf("the manifest does not validate against the closed result.manifest: %v", err)
	}

	var d document
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		t.Fatal(err)
	}
	if d.Protocol != Protocol || d.Version != Version() || d.DefaultEnv != "dev" || !d.PDPConfigured ||
		!slices.Equal(d.Envs, rt.Envs) || !slices.Equal(d.ErrorCodes, Codes()) || !slices.Equal(d.CLIOnly, CLIOnly()) {
		t.Errorf("manifest header is %+v", d)
	}
	if len(d.Ops) != len(Ops()) {
		t.Fatalf("manifest lists %d ops, the table has %d", len(d.Ops), len(Ops()))
	}
	for i, o := range Ops() {
		got := d.Ops[i]
		if got.Name != o.Name || got.ConsultsPDP != o.ConsultsPDP || got.Meta != o.Meta ||
			!slices.Equal(got.Required, append([]string{"op"}, o.Required()...)) || !slices.Equal(got.Optional, o.Optional()) {
			t.Errorf("manifest op %d is %+v, the table's is %+v", i, got, o)
		}
	}
	for _, n := range SchemaNames() {
		if _, ok := d.Schemas[n]; !ok {
			t.Errorf("manifest is missing schema %s", n)
		}
	}
	if _, ok := d.Capabilities["audit_chain"]; !ok || d.Capabilities["standalone_schemas"]["id_prefix"] != SchemaPrefix {
		t.Errorf("manifest capabilities are %v", d.Capabilities)
	}
}

// TestDocumentBytes pins the op list's bytes: adding an op or a field is
// fine (update the string), changing the shape of one is a protocol bump.
func TestDocumentBytes(t *testing.T) {
	b, err := Document(Runtime{})
	if err != nil {
		t.Fatal(err)
	}
	const ops = `"ops":[` +
		`{"name":"get","required":["op","ref"],"optional":["id","env","actor","attestation","approval","version"],"consults_pdp":true,"meta":false},` +
		`{"name":"put","required":["op","ref","value"],"optional":["id","env","actor","attestation","approval","if_version"],"consults_pdp":true,"meta":false},` +
		`{"name":"rm","required":["op","ref"],"optional":["id","env","actor","attestation","approval","if_version"],"consults_pdp":true,"meta":false},` +
		`{"name":"rotate","required":["op","ref","value"],"optional":["id","env","actor","attestation","approval","if_version"],"consults_pdp":true,"meta":false},` +
		`{"name":"list","required":["op"],"optional":["id","env","actor","attestation","approval","deleted"],"consults_pdp":true,"meta":false},` +
		`{"name":"check","required":["op"],"optional":["id","env","actor","attestation","approval"],"consults_pdp":true,"meta":false},` +
		`{"name":"manifest","required":["op"],"optional":["id","env","actor","attestation"],"consults_pdp":false,"meta":true},` +
		`{"name":"shutdown","required":["op"],"optional":["id","env","actor","attestation"],"consults_pdp":false,"meta":true},` +
		`{"name":"scrub","required":["op","text"],"optional":["id","env","actor","attestation","stream","final"],"consults_pdp":false,"meta":false},` +
		`{"name":"http","required":["op","service","method","path"],"optional":["id","env","actor","attestation","query","headers","body","body_b64","approval"],"consults_pdp":true,"meta":false},` +
		`{"name":"exec","required":["op","action"],"optional":["id","env","actor","attestation","args","approval"],"consults_pdp":true,"meta":false},` +
		`{"name":"proxy","required":["op"],"optional":["id","env","actor","attestation","services","stop"],"consults_pdp":false,"meta":false},` +
		`{"name":"revoke","required":["op"],"optional":["id","ref","env","actor","attestation","grant","all"],"consults_pdp":false,"meta":false},` +
		`{"name":"approve","required":["op","approval","decision","approver"],"optional":["id","env","actor","attestation","scope"],"consults_pdp":false,"meta":false},` +
		`{"name":"approval","required":["op","approval"],"optional":["id","env","actor","attestation"],"consults_pdp":false,"meta":false},` +
		`{"name":"history","required":["op","ref"],"optional":["id","env","actor","attestation","approval"],"consults_pdp":true,"meta":false},` +
		`{"name":"rollback","required":["op","ref","version"],"optional":["id","env","actor","attestation","approval","if_version"],"consults_pdp":true,"meta":false},` +
		`{"name":"undelete","required":["op","ref"],"optional":["id","env","actor","attestation","approval","if_version"],"consults_pdp":true,"meta":false},` +
		`{"name":"destroy","required":["op","ref"],"optional":["id","env","actor","attestation","approval","versions"],"consults_pdp":true,"meta":false},` +
		`{"name":"changes","required":["op"],"optional":["id","env","actor","attestation","approval","since"],"consults_pdp":true,"meta":false}]`
	if !bytes.Contains(b, []byte(ops)) {
		t.Errorf("the manifest's ops are not\n%s\nmanifest:\n%.2000s", ops, b)
	}
	if !bytes.HasPrefix(b, []byte(`{"protocol":"arca-serve/1","version":"`+Version()+`",`)) {
		t.Errorf("the manifest starts %.80s", b)
	}
}

// TestHistoryCapability: the history capability lists each env's vault's
// settings as the runtime gives them, and the bounds of the ops.
func TestHistoryCapability(t *testing.T) {
	h := Capabilities(Runtime{History: map[string]HistoryDoc{"prod": {MaxVersions: 3, KeepDeletedSeconds: 0}}})["history"]
	envs, _ := h["envs"].(map[string]HistoryDoc)
	if envs["prod"] != (HistoryDoc{MaxVersions: 3}) || h["max_versions_max"] != MaxKeptVersions || h["destroy_max"] != MaxDestroy || h["changes_max"] != MaxChanges {
		t.Errorf("history capability = %v", h)
	}
	b, err := Document(Runtime{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"history":{"changes_max":10000,"destroy_max":100,"envs":{},"max_versions_max":100}`)) {
		t.Errorf("a runtime with no vaults lists no envs' history: %.3000s", b)
	}
}
