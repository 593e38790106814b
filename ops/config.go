package ops

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops/ref"
)

// Config is arca's configuration (SPEC §3). Build it with LoadConfig or
// ParseConfig: they validate it and capture the environment its path
// defaults come from.
type Config struct {
	DefaultEnv string                 `toml:"default_env"`
	Envs       map[string]EnvConfig   `toml:"envs"`
	Vaults     map[string]VaultConfig `toml:"vaults"`
	Guardrails Guardrails             `toml:"guardrails"`
	Audit      AuditConfig            `toml:"audit"`
	Serve      ServeConfig            `toml:"serve"`

	Path   string `toml:"-"` // file it came from, "" when none
	Origin Origin `toml:"-"` // how it was found

	// Captured from getenv at load time; XDG values only when absolute.
	home, xdgConfig, xdgData, xdgState, identityEnv string
	envNames                                        []string // sorted, precomputed
}

// Origin says how the config file was found.
type Origin int

// The origins, in the order LoadConfig tries them.
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

// VaultConfig is one [vaults.NAME] table.
type VaultConfig struct {
	Kind       string   `toml:"kind"`       // "file" or "etcd"
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
	TimeoutMS    int      `toml:"timeout_ms"` // bound on one op, retries included; default 5000
	PinFile      string   `toml:"-"`          // where this machine pins the vault's key (derived)
}

// Guardrails is the [guardrails] table.
type Guardrails struct {
	Rules []Rule `toml:"rule"`
}

// Rule is one [[guardrails.rule]]: it denies every request its given fields
// all match. Env, Ref and Actor are path.Match globs; "" matches anything.
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

// ServeConfig is the [serve] table.
type ServeConfig struct {
	PDP *PDPConfig `toml:"pdp"` // nil: no PDP configured
}

// PDPConfig is the [serve.pdp] table.
type PDPConfig struct {
	Exec         string `toml:"exec"`
	AllowOnError bool   `toml:"allow_on_error"`
	TimeoutMS    int    `toml:"timeout_ms"` // 5000 when omitted
}

const (
	defaultEnv       = "default"
	defaultTimeoutMS = 5000
	maxTimeoutMS     = 600_000
)

// LoadConfig finds and parses the config: flagPath (the --config flag), else
// $ARCA_CONFIG (pinned: a missing file is an error); else ./arca.toml in the
// working directory (implicit); else $XDG_CONFIG_HOME/arca/arca.toml, default
// ~/.config/arca/arca.toml (user). None found gives a Config with Origin
// OriginNone. getenv stands in for os.Getenv; nil means os.Getenv.
func LoadConfig(flagPath string, getenv func(string) string) (*Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	c := newConfig(getenv)
	if flagPath != "" || getenv("ARCA_CONFIG") != "" {
		from, p := "--config", flagPath
		if p == "" {
			from, p = "ARCA_CONFIG", getenv("ARCA_CONFIG")
		}
		p, err := c.expandHome(p, from)
		if err != nil {
			return nil, err
		}
		return loadFile(p, OriginPinned, from, getenv)
	}
	implicit, err := filepath.Abs("arca.toml")
	if err != nil {
		return nil, Errorf(manifest.OpError, "config: cannot locate ./arca.toml: %v", err)
	}
	if found, err := loadFile(implicit, OriginImplicit, "", getenv); found != nil || err != nil {
		return found, err
	}
	if dir := c.configDir(); dir != "" {
		user := filepath.Join(dir, "arca", "arca.toml")
		if found, err := loadFile(user, OriginUser, "", getenv); found != nil || err != nil {
			return found, err
		}
	}
	c.finish()
	return c, nil
}

// loadFile reads and parses the config at p. A missing file is an error when
// pinned (from names the flag or variable) and (nil, nil) otherwise.
func loadFile(p string, origin Origin, from string, getenv func(string) string) (*Config, error) {
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		if origin == OriginPinned {
			return nil, Errorf(manifest.OpError, "config %s (from %s) does not exist", p, from)
		}
		return nil, nil
	}
	if err != nil {
		return nil, Errorf(manifest.OpError, "config %s: %v", p, unwrapPath(err))
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, manifest.MaxConfig+1))
	if err != nil {
		return nil, Errorf(manifest.OpError, "config %s: %v", p, unwrapPath(err))
	}
	if len(data) > manifest.MaxConfig {
		return nil, Errorf(manifest.OpError, "config %s is larger than the %d-byte cap", p, manifest.MaxConfig)
	}
	c, err := ParseConfig(data, p, getenv)
	if err != nil {
		return nil, err
	}
	c.Path, c.Origin = p, origin
	return c, nil
}

// unwrapPath drops the operation and path a *fs.PathError repeats.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// fileConfig is the document as decoded: it tells an omitted timeout_ms
// from an explicit one.
type fileConfig struct {
	DefaultEnv string                 `toml:"default_env"`
	Envs       map[string]EnvConfig   `toml:"envs"`
	Vaults     map[string]VaultConfig `toml:"vaults"`
	Guardrails Guardrails             `toml:"guardrails"`
	Audit      AuditConfig            `toml:"audit"`
	Serve      struct {
		PDP *struct {
			Exec         string `toml:"exec"`
			AllowOnError bool   `toml:"allow_on_error"`
			TimeoutMS    *int   `toml:"timeout_ms"`
		} `toml:"pdp"`
	} `toml:"serve"`
}

// ParseConfig parses and validates data; name (the file) prefixes messages.
// getenv stands in for os.Getenv; nil means os.Getenv.
func ParseConfig(data []byte, name string, getenv func(string) string) (*Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	var fc fileConfig
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&fc); err != nil {
		return nil, decodeError(name, err)
	}
	c := newConfig(getenv)
	c.DefaultEnv, c.Envs, c.Vaults = fc.DefaultEnv, fc.Envs, fc.Vaults
	c.Guardrails, c.Audit = fc.Guardrails, fc.Audit
	if p := fc.Serve.PDP; p != nil {
		c.Serve.PDP = &PDPConfig{Exec: p.Exec, AllowOnError: p.AllowOnError, TimeoutMS: defaultTimeoutMS}
		if p.TimeoutMS != nil {
			c.Serve.PDP.TimeoutMS = *p.TimeoutMS
		}
	}
	if err := c.validate(name); err != nil {
		return nil, err
	}
	c.finish()
	return c, nil
}

// decodeError turns a go-toml error into "name:line: problem".
func decodeError(name string, err error) error {
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) && len(strict.Errors) > 0 {
		first := &strict.Errors[0]
		line, _ := first.Position()
		more := ""
		if n := len(strict.Errors) - 1; n > 0 {
			more = " (and " + plural(n, "more unknown key") + ")"
		}
		return Errorf(manifest.OpError, "%s:%d: unknown key %q%s", name, line, keyString(first.Key()), more)
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		line, _ := de.Position()
		msg := strings.TrimPrefix(de.Error(), "toml: ")
		if rest, ok := strings.CutPrefix(msg, "cannot decode TOML "); ok {
			// The rest names Go types; say what a config author can act on.
			got, _, _ := strings.Cut(rest, " ")
			msg = "wrong type (got a TOML " + got + ")"
		}
		if key := de.Key(); len(key) > 0 {
			return Errorf(manifest.OpError, "%s:%d: key %q: %s", name, line, keyString(key), msg)
		}
		return Errorf(manifest.OpError, "%s:%d: %s", name, line, msg)
	}
	return Errorf(manifest.OpError, "%s: %v", name, err)
}

func keyString(k toml.Key) string { return strings.Join(k, ".") }

// newConfig returns an empty config holding what its path defaults need
// from the environment.
func newConfig(getenv func(string) string) *Config {
	return &Config{
		home:        getenv("HOME"),
		xdgConfig:   absOnly(getenv("XDG_CONFIG_HOME")),
		xdgData:     absOnly(getenv("XDG_DATA_HOME")),
		xdgState:    absOnly(getenv("XDG_STATE_HOME")),
		identityEnv: getenv("ARCA_IDENTITY"),
	}
}

// absOnly drops a relative XDG base directory, as the XDG spec says to.
func absOnly(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return ""
}

// finish precomputes what requests read.
func (c *Config) finish() { c.envNames = c.sortedEnvNames() }

func (c *Config) sortedEnvNames() []string {
	if len(c.Envs) == 0 {
		return []string{defaultEnv}
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

// ResolveEnv picks the env: pin, else reqEnv, else ctxEnv (the --env flag or
// ARCA_ENV, chosen by the caller), else default_env, else "default". An
// invalid or unconfigured env is bad_request.
func (c *Config) ResolveEnv(pin, reqEnv, ctxEnv string) (string, error) {
	env := pin
	for _, e := range [...]string{reqEnv, ctxEnv, c.DefaultEnv, defaultEnv} {
		if env != "" {
			break
		}
		env = e
	}
	if err := c.checkEnv(env); err != nil {
		return "", err
	}
	return env, nil
}

// checkEnv returns bad_request unless env is a configured env.
func (c *Config) checkEnv(env string) error {
	if p := ref.SegmentProblem(env); p != "" {
		if len(env) > manifest.MaxSegment {
			return Errorf(manifest.BadRequest, "invalid env: %s", p)
		}
		return Errorf(manifest.BadRequest, "invalid env %q: %s", env, p)
	}
	if c.hasEnv(env) {
		return nil
	}
	return Errorf(manifest.BadRequest, "unknown env %q (%s)", env, configured(c.EnvNames()))
}

// hasEnv reports whether env is configured; with no [envs], only "default" is.
func (c *Config) hasEnv(env string) bool {
	if len(c.Envs) == 0 {
		return env == defaultEnv
	}
	_, ok := c.Envs[env]
	return ok
}

// VaultFor returns the name and config of env's vault, paths expanded and
// defaults applied. With no [envs], env "default" uses vault "default":
// [vaults.default] when configured, else the embedded file vault.
func (c *Config) VaultFor(env string) (name string, v VaultConfig, err error) {
	if err := c.checkEnv(env); err != nil {
		return "", VaultConfig{}, err
	}
	name = defaultEnv
	if len(c.Envs) > 0 {
		name = c.Envs[env].Vault
	}
	v, ok := c.Vaults[name]
	switch {
	case ok:
		v.Recipients, v.Endpoints = slices.Clone(v.Recipients), slices.Clone(v.Endpoints)
	case len(c.Envs) == 0:
		v = VaultConfig{Kind: "file"}
	default:
		return "", VaultConfig{}, Errorf(manifest.OpError, "env %q: vault %q is not configured", env, name)
	}
	key := "vaults." + name
	if v.Kind == "file" {
		if v.Path, err = c.pathOr(v.Path, key+".path", c.dataDir, name+".vault"); err != nil {
			return "", VaultConfig{}, err
		}
	}
	if v.Kind == "etcd" {
		v.PinFile = c.pinFile(name, v.Prefix)
	}
	for _, f := range []struct {
		p    *string
		what string
	}{{&v.PasswordFile, "password_file"}, {&v.TLSCA, "tls_ca"}, {&v.TLSCert, "tls_cert"}, {&v.TLSKey, "tls_key"}} {
		if *f.p != "" {
			if *f.p, err = c.expand(*f.p, key+"."+f.what); err != nil {
				return "", VaultConfig{}, err
			}
		}
	}
	if v.Identity == "" && c.identityEnv != "" {
		v.Identity, err = c.expandHome(c.identityEnv, "ARCA_IDENTITY")
	} else {
		v.Identity, err = c.pathOr(v.Identity, key+".identity", c.configDir, "identity.txt")
	}
	if err != nil {
		return "", VaultConfig{}, err
	}
	return name, v, nil
}

// AuditFile returns where CLI audit events go: [audit] file, else
// $XDG_STATE_HOME/arca/audit.log, default ~/.local/state/arca/audit.log.
func (c *Config) AuditFile() (string, error) {
	return c.pathOr(c.Audit.File, "audit.file", c.stateDir, "audit.log")
}

// pathOr expands p (what names it in messages), or when p is "" returns
// base()/arca/file.
func (c *Config) pathOr(p, what string, base func() string, file string) (string, error) {
	if p != "" {
		return c.expand(p, what)
	}
	dir := base()
	if dir == "" {
		return "", Errorf(manifest.OpError, "HOME is not set; needed for the default %s", what)
	}
	return filepath.Join(dir, "arca", file), nil
}

// expand resolves a leading "~/" to $HOME and a relative path against the
// config file's directory (when there is one). what names p in messages.
func (c *Config) expand(p, what string) (string, error) {
	p, err := c.expandHome(p, what)
	if err == nil && c.Path != "" && !filepath.IsAbs(p) {
		p = filepath.Join(filepath.Dir(c.Path), p)
	}
	return p, err
}

// expandHome resolves a leading "~/" to $HOME.
func (c *Config) expandHome(p, what string) (string, error) {
	rest, ok := strings.CutPrefix(p, "~/")
	if !ok {
		return p, nil
	}
	if c.home == "" {
		return "", Errorf(manifest.OpError, "HOME is not set; needed to expand ~/ in %s", what)
	}
	return filepath.Join(c.home, rest), nil
}

func (c *Config) configDir() string { return xdgDir(c.xdgConfig, c.home, ".config") }
func (c *Config) dataDir() string   { return xdgDir(c.xdgData, c.home, ".local/share") }
func (c *Config) stateDir() string  { return xdgDir(c.xdgState, c.home, ".local/state") }

// pinFile is where this machine pins the key of the shared vault name at
// prefix: $XDG_STATE_HOME/arca/pins/ (default ~/.local/state/arca/pins/),
// "" when HOME is unset.
func (c *Config) pinFile(name, prefix string) string {
	dir := c.stateDir()
	if dir == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(prefix))
	return filepath.Join(dir, "arca", "pins", name+"-"+hex.EncodeToString(sum[:8])+".pin")
}

// xdgDir returns xdg, else home/def, else "" when HOME is unset.
func xdgDir(xdg, home, def string) string {
	switch {
	case xdg != "":
		return xdg
	case home != "":
		return filepath.Join(home, def)
	}
	return ""
}

// validate checks what decoding cannot; every message names the file and
// the offending key. Maps are walked in sorted order so the first problem
// reported is stable.
func (c *Config) validate(name string) error {
	for _, vn := range sortedKeys(c.Vaults) {
		if msg := vaultProblem(vn, c.Vaults[vn]); msg != "" {
			return Errorf(manifest.OpError, "%s: %s", name, msg)
		}
	}
	for _, en := range sortedKeys(c.Envs) {
		if msg := c.envProblem(en); msg != "" {
			return Errorf(manifest.OpError, "%s: %s", name, msg)
		}
	}
	if msg := c.defaultEnvProblem(); msg != "" {
		return Errorf(manifest.OpError, "%s: %s", name, msg)
	}
	for i := range c.Guardrails.Rules {
		if msg := c.Guardrails.Rules[i].problem(); msg != "" {
			return Errorf(manifest.OpError, "%s: guardrails.rule #%d: %s", name, i+1, msg)
		}
	}
	if msg := pdpProblem(c.Serve.PDP); msg != "" {
		return Errorf(manifest.OpError, "%s: %s", name, msg)
	}
	return nil
}

func (c *Config) envProblem(name string) string {
	if p := ref.SegmentProblem(name); p != "" {
		return "envs." + strconv.Quote(name) + ": invalid env name: " + p
	}
	vault := c.Envs[name].Vault
	switch {
	case vault == "":
		return "envs." + name + ".vault is required"
	case !hasKey(c.Vaults, vault):
		return "envs." + name + ".vault: no vault " + strconv.Quote(vault) + " is configured (" + configured(sortedKeys(c.Vaults)) + ")"
	}
	return ""
}

func (c *Config) defaultEnvProblem() string {
	d := c.DefaultEnv
	switch {
	case d == "":
		return ""
	case ref.SegmentProblem(d) != "":
		return "default_env " + strconv.Quote(d) + ": " + ref.SegmentProblem(d)
	case !c.hasEnv(d):
		return "default_env " + strconv.Quote(d) + " is not a configured env (" + configured(c.sortedEnvNames()) + ")"
	}
	return ""
}

func pdpProblem(p *PDPConfig) string {
	switch {
	case p == nil:
		return ""
	case strings.TrimSpace(p.Exec) == "":
		return "serve.pdp.exec is required when [serve.pdp] is present"
	case p.TimeoutMS < 1 || p.TimeoutMS > maxTimeoutMS:
		return "serve.pdp.timeout_ms " + strconv.Itoa(p.TimeoutMS) + " is out of range (1 to " + strconv.Itoa(maxTimeoutMS) + ")"
	}
	return ""
}

// configured renders names for a message: "configured: a, b" or "none configured".
func configured(names []string) string {
	if len(names) == 0 {
		return "none configured"
	}
	return "configured: " + strings.Join(names, ", ")
}

func hasKey[V any](m map[string]V, k string) bool {
	_, ok := m[k]
	return ok
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
