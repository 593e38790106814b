package config

import "regexp"

// Service is one [services.NAME] table (SPEC §13): a destination arca
// calls on a caller's behalf, with the credential it injects. Everything
// about where a request goes and what it carries comes from here, never
// from the request.
type Service struct {
	BaseURL     string   `toml:"base_url"`     // https, or http only to a loopback host
	Credential  string   `toml:"credential"`   // an arca:// ref
	Auth        string   `toml:"auth"`         // bearer | basic | header | query
	UsernameRef string   `toml:"username_ref"` // auth basic: the ref of the user name (the credential is the password)
	Header      string   `toml:"header"`       // auth header: the header that carries the credential
	QueryParam  string   `toml:"query_param"`  // auth query: the query parameter that carries it
	Methods     []string `toml:"methods"`      // the methods allowed; ["GET"] when omitted
	Paths       []string `toml:"paths"`        // globs (package glob) over the decoded, cleaned path
	// TimeoutMS bounds one request, the reading of its response included:
	// DefaultServiceTimeoutMS when omitted, at most MaxServiceTimeoutMS.
	TimeoutMS int `toml:"-"`
	// MaxResponseBytes caps a response body (beyond it: truncated):
	// DefaultMaxResponseBytes when omitted, at most MaxResponseBytesCap.
	MaxResponseBytes int    `toml:"-"`
	FollowRedirects  string `toml:"follow_redirects"` // "none" (the default) or "same-origin"
	AllowPrivate     bool   `toml:"allow_private"`    // reach loopback, private, link-local and metadata addresses
	TLSCA            string `toml:"tls_ca"`           // extra roots (PEM), path expanded as other paths are
}

// Action is one [actions.NAME] table (SPEC §13): a fixed command arca
// runs on a caller's behalf, with refs resolved into its environment.
type Action struct {
	Argv    []string          `toml:"argv"` // the command and its fixed arguments
	Args    string            `toml:"args"` // a regexp each extra argument must match whole
	MaxArgs int               `toml:"-"`    // extra arguments at most: DefaultMaxArgs when omitted, 0 without Args
	Env     map[string]string `toml:"env"`  // variable name → arca:// ref
	// TimeoutMS bounds a run: DefaultActionTimeoutMS when omitted, at most
	// MaxActionTimeoutMS.
	TimeoutMS int `toml:"-"`
	// MaxOutputBytes caps each of stdout and stderr (beyond it: truncated):
	// DefaultMaxOutputBytes when omitted, at most MaxOutputBytesCap.
	MaxOutputBytes int `toml:"-"`

	ArgsRE *regexp.Regexp `toml:"-"` // Args compiled, anchored at both ends; nil: no extra argument is allowed
}

// The bounds and defaults of services and actions.
const (
	DefaultServiceTimeoutMS = 30_000
	MaxServiceTimeoutMS     = 120_000
	DefaultMaxResponseBytes = 1 << 20
	MaxResponseBytesCap     = 8 << 20
	DefaultMaxArgs          = 4
	MaxArgsCap              = 64
	DefaultActionTimeoutMS  = 30_000
	MaxActionTimeoutMS      = 600_000
	DefaultMaxOutputBytes   = 256 << 10
	MaxOutputBytesCap       = 8 << 20
)
