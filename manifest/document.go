package manifest

import (
	"embed"
	"encoding/json"
	"io/fs"
	"strings"
)

//go:embed schemas/*.json
var schemaFiles embed.FS

// SchemaNames lists the published schemas, by file name.
func SchemaNames() []string {
	return []string{"request.json", "response.json", "error.json", "result.json", "event.json"}
}

// Schema returns the schema in file name, as embedded.
func Schema(name string) ([]byte, error) {
	return fs.ReadFile(schemaFiles, "schemas/"+name)
}

// Schemas returns every published schema keyed by its name without ".json".
func Schemas() (map[string]json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	for _, n := range SchemaNames() {
		b, err := Schema(n)
		if err != nil {
			return nil, err
		}
		out[strings.TrimSuffix(n, ".json")] = b
	}
	return out, nil
}

// Runtime is what the manifest says about this process's configuration.
type Runtime struct {
	Envs          []string
	DefaultEnv    string
	PDPConfigured bool
}

type opDoc struct {
	Name        string   `json:"name"`
	Required    []string `json:"required"`
	Optional    []string `json:"optional"`
	ConsultsPDP bool     `json:"consults_pdp"`
	Meta        bool     `json:"meta"`
}

type document struct {
	Protocol      string                     `json:"protocol"`
	Version       string                     `json:"version"`
	Ops           []opDoc                    `json:"ops"`
	ErrorCodes    []Code                     `json:"error_codes"`
	Limits        map[string]int             `json:"limits"`
	CLIOnly       []string                   `json:"cli_only"`
	Envs          []string                   `json:"envs"`
	DefaultEnv    string                     `json:"default_env"`
	PDPConfigured bool                       `json:"pdp_configured"`
	Schemas       map[string]json.RawMessage `json:"schemas"`
}

// Limits returns every limit, in bytes (rows for list_rows, characters for
// segment_chars, levels for depth_levels).
func Limits() map[string]int {
	return map[string]int{
		"line_bytes":        MaxLine,
		"op_bytes":          MaxOp,
		"id_bytes":          MaxID,
		"depth_levels":      MaxDepth,
		"ref_bytes":         MaxRef,
		"env_bytes":         MaxSegment,
		"segment_chars":     MaxSegment,
		"value_bytes":       MaxValue,
		"actor_bytes":       MaxActor,
		"attestation_bytes": MaxAttestation,
		"list_rows":         MaxListRows,
	}
}

// Document returns the manifest: protocol, ops, codes, limits and schemas,
// with rt's envs and whether a PDP is configured (never its command).
func Document(rt Runtime) ([]byte, error) {
	schemas, err := Schemas()
	if err != nil {
		return nil, err
	}
	d := document{
		Protocol: Protocol, Version: Version, ErrorCodes: Codes(), Limits: Limits(), CLIOnly: CLIOnly(),
		Envs: rt.Envs, DefaultEnv: rt.DefaultEnv, PDPConfigured: rt.PDPConfigured, Schemas: schemas,
	}
	for _, op := range Ops() {
		d.Ops = append(d.Ops, opDoc{Name: op.Name, Required: append([]string{"op"}, op.Required()...),
			Optional: op.Optional(), ConsultsPDP: op.ConsultsPDP, Meta: op.Meta})
	}
	return json.Marshal(d)
}
