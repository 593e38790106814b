package manifest

import (
	"encoding/json"

	"github.com/arca-secrets/arca/internal/scrub"
)

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
	Capabilities  map[string]map[string]any  `json:"capabilities"`
	Schemas       map[string]json.RawMessage `json:"schemas"`
}

// Capabilities names what this build does beyond what the protocol's first
// release promised, each with its parameters. A client reads a capability
// that is absent as "this server predates it", never as "false"; adding
// one is not a protocol change.
func Capabilities() map[string]map[string]any {
	return map[string]map[string]any{
		// Every event carries prev, the hex SHA-256 of the previous line.
		"audit_chain": {"field": "prev", "hash": "sha256"},
		// Every published schema stands alone, with an absolute $id, and
		// each op's result is a schema of its own ("result.get", ...).
		"standalone_schemas": {"id_prefix": SchemaPrefix},
		// The scrub op: the forms of a value it matches, the shortest
		// value it can register (shorter ones are unscrubbable), the
		// shortest form matched whatever its neighbours, the shortest
		// line of a multi-line value matched alone, and its streams.
		"scrub": {
			"forms":               ScrubForms(),
			"min_bytes":           scrub.MinLen,
			"anywhere_bytes":      scrub.Anywhere,
			"min_line_bytes":      scrub.MinLineLen,
			"streams":             MaxStreams,
			"stream_idle_seconds": int(StreamIdle.Seconds()),
			"placeholder":         "<redacted:ns/name>",
		},
	}
}

// ScrubForms names the forms of a value the scrub engine matches, as the
// scrub capability lists them (a test holds each name to the engine: a
// value written in that form is redacted).
func ScrubForms() []string {
	return []string{"raw", "lines", "json", "url_query", "url_path", "hex_lower", "hex_upper",
		"base64_std", "base64_url", "shell_single_quote"}
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
		"reads_in_flight":   MaxReads,
		"stream_bytes":      MaxStream,
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
		Envs: rt.Envs, DefaultEnv: rt.DefaultEnv, PDPConfigured: rt.PDPConfigured, Capabilities: Capabilities(), Schemas: schemas,
	}
	for _, op := range Ops() {
		d.Ops = append(d.Ops, opDoc{Name: op.Name, Required: append([]string{"op"}, op.Required()...),
			Optional: op.Optional(), ConsultsPDP: op.ConsultsPDP, Meta: op.Meta})
	}
	return json.Marshal(d)
}
