package mcp

import (
	"encoding/json"

	"github.com/arca-secrets/arca/manifest"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// tool is one tool arca mcp offers, standing for one served op: its
// arguments are that op's fields (less drop), its structured output that
// op's result. Only ops whose results hold no value are in the table.
type tool struct {
	name  string
	op    string            // the served op it runs
	about string            // its description, for the model
	drop  manifest.FieldSet // fields of the op the tool does not take
	// readOnly: the tool changes nothing arca keeps (a use may change
	// things upstream: it is not read-only).
	readOnly bool
}

// tools is the table of the tools that stand for an op. arca_request_secret
// stands for none: it is added on its own (request.go).
func tools() []tool {
	return []tool{
		{name: "arca_list", op: "list", readOnly: true,
			about: "List the secrets of an env: each name's ref, version and times, never a value. deleted: true lists soft-deleted names too."},
		{name: "arca_history", op: "history", readOnly: true,
			about: "A secret's kept versions: each version's number, state and when it was written, never a value."},
		{name: "arca_changes", op: "changes", readOnly: true,
			about: "The names of an env whose state changed since a cursor. Call it without since for the current cursor; keep the cursor each answer gives."},
		{name: "arca_http", op: "http",
			about: "Call a service configured in arca with its credential, which you never see: arca adds it, sends the request to the service's own base URL, and returns the status, headers and body with every secret value scrubbed. method and path must be ones the service allows."},
		{name: "arca_action", op: "exec",
			about: "Run an action configured in arca, with its secrets in the action's environment, which you never see: returns the exit code and the output with every secret value scrubbed. args must be ones the action allows."},
	}
}

// definition is t as MCP lists it: its input schema derived from its op's
// fields, its output schema its op's result schema.
func (t tool) definition() (*sdk.Tool, error) {
	in, err := manifest.ToolInput(t.op, t.drop)
	if err != nil {
		return nil, err
	}
	out, err := manifest.Schema("result." + t.op)
	if err != nil {
		return nil, err
	}
	return &sdk.Tool{
		Name: t.name, Description: t.about,
		InputSchema: in, OutputSchema: json.RawMessage(out),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: t.readOnly, OpenWorldHint: openWorld(t.op)},
	}, nil
}

// openWorld: a use reaches outside arca.
func openWorld(op string) *bool {
	spec, _ := manifest.Op(op)
	w := spec.Use
	return &w
}
