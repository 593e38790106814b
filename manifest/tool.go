package manifest

import (
	"encoding/json"
	"fmt"
)

// ToolInput returns the JSON Schema of the arguments of an MCP tool that
// stands for the op named op: an object of the fields a tool's caller may
// send (env, and what op needs and accepts, less drop), each property as
// the request schema has it, op's needs less drop required, and no other
// property. A tool's arguments carry the field names of the op it stands
// for, so the schema is derived from the op table, never kept beside it.
func ToolInput(op string, drop FieldSet) (map[string]any, error) {
	spec, ok := Op(op)
	if !ok {
		return nil, fmt.Errorf("tool input: unknown op %q", op)
	}
	b, err := Schema("request")
	if err != nil {
		return nil, err
	}
	var req struct {
		Properties map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(b, &req); err != nil {
		return nil, fmt.Errorf("tool input: %v", err)
	}
	fields := (spec.Needs | spec.Accepts | FieldEnv) &^ drop
	props := map[string]any{}
	for _, name := range fields.Names() {
		p, ok := req.Properties[name]
		if !ok {
			return nil, fmt.Errorf("tool input: the request schema has no property %q", name)
		}
		props[name] = p
	}
	required := []string{}
	if need := spec.Needs &^ drop; need != 0 {
		required = need.Names()
	}
	return map[string]any{
		"type":                 "object",
		"properties":           props,
		"required":             required,
		"additionalProperties": false,
	}, nil
}
