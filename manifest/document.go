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
	// Services and Actions are the configured uses, as the use
	// capability lists them: what a caller may ask for, never a
	// credential, a host or a command.
	Services []ServiceDoc
	Actions  []ActionDoc
	// ApprovalPage: [serve.approvals] listen is set, so an approval's
	// details carry the url of its page. Renew is [serve.grants] renew.
	ApprovalPage bool
	Renew        string
	// History is the history settings of each env's vault, by env
	// name, as the history capability lists them.
	History map[string]HistoryDoc
}

// HistoryDoc is an env's vault's history settings as the manifest shows
// them: the versions it keeps of a name, the current one included, and
// how long an rm can be undone (0: rm erases at once).
type HistoryDoc struct {
	MaxVersions        int   `json:"max_versions"`
	KeepDeletedSeconds int64 `json:"keep_deleted_seconds"`
}

// ServiceDoc is a configured service as the manifest shows it.
type ServiceDoc struct {
	Name    string   `json:"name"`
	Methods []string `json:"methods"`
	Paths   []string `json:"paths"`
}

// ActionDoc is a configured action as the manifest shows it: the pattern
// each extra argument must match ("" when none is allowed) and how many.
type ActionDoc struct {
	Name    string `json:"name"`
	Args    string `json:"args"`
	MaxArgs int    `json:"max_args"`
}

// UpstreamCauses lists what details.cause of an upstream_failed error
// names: the step of a use that failed.
func UpstreamCauses() []string {
	return []string{"dns", "connect", "tls", "timeout", "blocked_address", "redirect", "read", "start"}
}

// NoReveal is the obligation that lets a verdict allow the uses of a ref
// (http, exec, the proxy) but not a get of it (SPEC §14).
const NoReveal = "arca:no_reveal"

// ObligationTTL and ObligationMaxUses are the obligations that open a grant (SPEC §14),
// given with a value: arca:ttl=S (seconds, 1–86400) ends it S seconds
// after it opens, arca:max_uses=N (1–10000) bounds its uses.
const (
	ObligationTTL     = "arca:ttl"
	ObligationMaxUses = "arca:max_uses"
)

// ObligationApproval, on a deny, says a human may approve the request:
// it is answered approval_required (SPEC §14). On an allow it cannot be
// fulfilled, so it denies.
const ObligationApproval = "arca:approval"

// ApprovalCauses lists what details.cause of a denied request names
// when an approval or a grant decided it.
func ApprovalCauses() []string {
	return []string{"grant_exhausted", "grant_expired", "grant_revoked", "approval_mismatch", "approval_unknown", "approval_denied", "approval_expired", "approvals_full"}
}

// ObligationPrefix starts every obligation arca enforces; an obligation
// with it that this build does not enforce makes the verdict a deny.
const ObligationPrefix = "arca:"

// Obligations lists the obligations this build enforces: the one table
// the PDP's supported_obligations, the obligations capability and the
// enforcement read.
func Obligations() []string {
	return []string{ObligationApproval, ObligationMaxUses, NoReveal, ObligationTTL}
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
func Capabilities(rt Runtime) map[string]map[string]any {
	return map[string]map[string]any{
		// The uses (http, exec, proxy): what this config lets a caller
		// ask for, how many run at once, and the causes of
		// upstream_failed.
		"use": {
			"services":       orEmpty(rt.Services),
			"actions":        orEmpty(rt.Actions),
			"uses_in_flight": MaxUses,
			"causes":         UpstreamCauses(),
		},
		// The arca: obligations of a verdict this build enforces; any
		// other arca: obligation makes the verdict a deny.
		"obligations": {"supported": Obligations()},
		// Approvals: a deny carrying arca:approval is answered
		// approval_required; a human decides on the page (when one is
		// configured) or the host relays the decision (approve).
		"approvals": {
			"pending_max":     MaxPending,
			"pending_seconds": int(ApprovalWait.Seconds()),
			"page":            rt.ApprovalPage,
			"renew":           rt.Renew,
			"causes":          ApprovalCauses(),
		},
		// Versions and history (SPEC §11): each env's vault's settings,
		// the most versions a vault may keep of a name, the most
		// versions one destroy names and the most changes one answer
		// holds.
		"history": {
			"envs":             orEmptyMap(rt.History),
			"max_versions_max": MaxKeptVersions,
			"destroy_max":      MaxDestroy,
			"changes_max":      MaxChanges,
		},
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
		"base64_std", "base64_url", "shell_single_quote", "html"}
}

// orEmpty is s, or an empty list for none: a list in JSON either way.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// orEmptyMap is m, or an empty map for none: an object in JSON either way.
func orEmptyMap[T any](m map[string]T) map[string]T {
	if m == nil {
		return map[string]T{}
	}
	return m
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
		"name_bytes":        MaxName,
		"method_bytes":      MaxMethod,
		"path_bytes":        MaxPath,
		"query_bytes":       MaxQuery,
		"headers_bytes":     MaxHeaders,
		"body_bytes":        MaxBody,
		"args_bytes":        MaxArgs,
		"services_bytes":    MaxServices,
		"uses_in_flight":    MaxUses,
		"approval_bytes":    MaxApprovalID,
		"grant_bytes":       MaxGrantID,
		"decision_bytes":    MaxDecision,
		"scope_bytes":       MaxScope,
		"approvals_pending": MaxPending,
		"versions_bytes":    MaxVersionsBytes,
		"cursor_bytes":      MaxCursor,
		"version_max":       MaxVersion,
		"destroy_versions":  MaxDestroy,
		"kept_versions":     MaxKeptVersions,
		"changes_rows":      MaxChanges,
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
		Protocol: Protocol, Version: Version(), ErrorCodes: Codes(), Limits: Limits(), CLIOnly: CLIOnly(),
		Envs: rt.Envs, DefaultEnv: rt.DefaultEnv, PDPConfigured: rt.PDPConfigured, Capabilities: Capabilities(rt), Schemas: schemas,
	}
	for _, op := range Ops() {
		d.Ops = append(d.Ops, opDoc{Name: op.Name, Required: append([]string{"op"}, op.Required()...),
			Optional: op.Optional(), ConsultsPDP: op.ConsultsPDP, Meta: op.Meta})
	}
	return json.Marshal(d)
}
