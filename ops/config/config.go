// Package config is arca's configuration (SPEC §3): the schema of arca.toml
// (this file), which file is read (load.go), strict TOML decoding whose
// errors name the file, line and key (decode.go) after a scan that bounds
// its cost (scan.go), the checks decoding cannot make (validate.go) with the
// one rule every timeout_ms follows (timeout.go) and the glob language of
// guardrails (glob.go), the path defaults: XDG base directories, ~/, and
// paths relative to the config file (paths.go), and the services and
// actions of SPEC §13: their shape (use.go), how they are read
// (useload.go) and checked (usecheck.go, actioncheck.go).
//
// Which env a request runs in and which vault serves it are decided by the
// ops layer, which owns the wire error codes. Errors here are plain; ops
// reports each of them as op_error. Messages name the file and the key,
// never a value.
//
// Limits: a config file is at most manifest.MaxConfig bytes and MaxKeys
// keys, so that it is accepted or refused in time linear in its size
// (scan.go); a timeout_ms is 1 to MaxTimeoutMS, DefaultTimeoutMS when
// omitted.
package config

import (
	"slices"
	"time"

	"github.com/arca-secrets/arca/vault"
)

// Config is arca's configuration. Build it with Load or Parse: they validate
// it and capture the environment its path defaults come from.
type Config struct {
	DefaultEnv string                 `toml:"default_env"`
	Envs       map[string]EnvConfig   `toml:"envs"`
	Vaults     map[string]VaultConfig `toml:"vaults"`
	Guardrails Guardrails             `toml:"guardrails"`
	Audit      AuditConfig            `toml:"audit"`
	Serve      ServeConfig            `toml:"serve"`
	Deploy     []Deploy               `toml:"deploy"` // [[deploy]] targets (deploy.go)
	Run        RunConfig              `toml:"run"`
	Services   map[string]Service     `toml:"-"` // [services.NAME] (use.go)
	Actions    map[string]Action      `toml:"-"` // [actions.NAME] (use.go)

	Path   string `toml:"-"` // file it came from, "" when none
	Origin Origin `toml:"-"` // how it was found

	// Captured from getenv at load time; XDG values only when absolute.
	home, xdgConfig, xdgData, xdgState, identityEnv string
	identityKey                                     bool     // $ARCA_IDENTITY_KEY is set
	envNames                                        []string // sorted, precomputed
}

// Default is the one env, and its vault, that exist when no [envs] is
// configured; without default_env, it is also the env a request falls to.
const Default = "default"

// Origin says how the config file was found.
type Origin int

// The origins, in the order Load tries them.
const (
	OriginNone     Origin = iota // no config file: built-in defaults
	OriginPinned                 // --config or $ARCA_CONFIG
	OriginImplicit               // ./arca.toml in the working directory
	OriginUser                   // $XDG_CONFIG_HOME/arca/arca.toml
)

func (o Origin) String() string {
	switch o {
	case OriginNone:
		return "none"
	case OriginPinned:
		return "pinned"
	case OriginImplicit:
		return "implicit"
	case OriginUser:
		return "user"
	}
	return "unknown"
}

// EnvConfig is one [envs.NAME] table.
type EnvConfig struct {
	Vault string `toml:"vault"`
}

// Kind is a vault's backend, as [vaults.NAME] kind names it.
type Kind string

// The kinds of vault arca has.
const (
	KindFile Kind = "file" // the embedded file vault (vault/file)
	KindEtcd Kind = "etcd" // the shared vault on etcd (vault/etcd)
)

// VaultConfig is one [vaults.NAME] table.
type VaultConfig struct {
	Kind       Kind     `toml:"kind"`       // KindFile or KindEtcd
	Path       string   `toml:"path"`       // file: the vault file
	Identity   string   `toml:"identity"`   // age identity file
	Recipients []string `toml:"recipients"` // age recipients the data key is wrapped to
	// kind etcd only:
	Endpoints    []string `toml:"endpoints"`     // host:port or URL of each member
	Prefix       string   `toml:"prefix"`        // key prefix, "/…/"
	Username     string   `toml:"username"`      // etcd auth
	Password     string   `toml:"password"`      // etcd auth; password_file keeps it out of the config
	PasswordFile string   `toml:"password_file"` // a file holding the password
	TLSCA        string   `toml:"tls_ca"`        // CA certificate (PEM) of the members
	TLSCert      string   `toml:"tls_cert"`      // client certificate (PEM), with tls_key
	TLSKey       string   `toml:"tls_key"`
	// TimeoutMS bounds one op, retries included: timeout_ms, resolved by
	// the timeout rule (timeout.go) when the table is decoded.
	TimeoutMS int    `toml:"-"`
	PinFile   string `toml:"-"` // where this machine pins the vault's key (derived)
	// History is [vaults.NAME.history] resolved, defaults filled in
	// (history.go); read it through HistorySettings.
	History vault.History `toml:"-"`
}

// EtcdTimeout is how long one op on v may take, retries included.
func (v VaultConfig) EtcdTimeout() time.Duration {
	return time.Duration(v.TimeoutMS) * time.Millisecond
}

// Guardrails is the [guardrails] table.
type Guardrails struct {
	Rules []Rule `toml:"rule"`
}

// Rule is one [[guardrails.rule]]: it denies every request its given fields
// all match. Env, Ref and Actor are globs (glob.go), in which "*" matches
// "/" too; "" matches anything.
type Rule struct {
	Env    string   `toml:"env"`
	Ops    []string `toml:"ops"` // omitted: every vault op
	Ref    string   `toml:"ref"`
	Actor  string   `toml:"actor"`
	Reason string   `toml:"reason"`
}

// AuditConfig is the [audit] table.
type AuditConfig struct {
	File string `toml:"file"`
}

// RunConfig is the [run] table: what arca run and arca env do besides
// what their flags ask.
type RunConfig struct {
	// Pass names the variables of arca's environment passed on as they
	// are, as --pass does: each NAME or PREFIX*, under the rules of
	// internal/passenv; at most passenv.MaxPatterns of them.
	Pass []string `toml:"pass"`
}

// ServeConfig is the [serve] table.
type ServeConfig struct {
	PDP       *PDPConfig       `toml:"pdp"` // nil: no PDP configured
	Grants    GrantsConfig     `toml:"grants"`
	Approvals *ApprovalsConfig `toml:"approvals"` // nil: no approval page
}

// PDPConfig is the [serve.pdp] table: exactly one of Exec (a command) and
// URL (a policy server).
type PDPConfig struct {
	Exec         string `toml:"exec"`
	Mode         string `toml:"mode"`      // with exec: "spawn" (default) or "persistent"
	URL          string `toml:"url"`       // http://<loopback>[:port]/<path> or unix:<socket>
	HTTPPath     string `toml:"http_path"` // with a unix: url, the request path
	API          string `toml:"api"`       // with url: "opa" or "authzen"
	AllowOnError bool   `toml:"allow_on_error"`
	// TimeoutMS bounds one decision: timeout_ms, resolved by the timeout
	// rule (timeout.go) when the table is decoded.
	TimeoutMS int `toml:"-"`
}

// finish precomputes what requests read.
func (c *Config) finish() { c.envNames = c.sortedEnvNames() }

func (c *Config) sortedEnvNames() []string {
	if len(c.Envs) == 0 {
		return []string{Default}
	}
	return sortedKeys(c.Envs)
}

// EnvNames returns the configured env names, sorted; with no [envs]
// configured, ["default"].
func (c *Config) EnvNames() []string {
	if c.envNames == nil {
		return c.sortedEnvNames()
	}
	return slices.Clone(c.envNames)
}

// HasEnv reports whether env is configured; with no [envs], only "default" is.
func (c *Config) HasEnv(env string) bool {
	if len(c.Envs) == 0 {
		return env == Default
	}
	_, ok := c.Envs[env]
	return ok
}
