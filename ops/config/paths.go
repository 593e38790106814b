package config

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/arca-secrets/arca/vault/identity"
)

// newConfig returns an empty config holding what its path defaults need
// from the environment.
func newConfig(getenv func(string) string) *Config {
	return &Config{
		home:        getenv("HOME"),
		xdgConfig:   absOnly(getenv("XDG_CONFIG_HOME")),
		xdgData:     absOnly(getenv("XDG_DATA_HOME")),
		xdgState:    absOnly(getenv("XDG_STATE_HOME")),
		identityEnv: getenv("ARCA_IDENTITY"),
		identityKey: getenv(identity.KeyEnv) != "",
	}
}

// absOnly drops a relative XDG base directory, as the XDG spec says to.
func absOnly(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return ""
}

// ExpandVault returns v, the vault called name, with its paths expanded and
// its path defaults applied: a file vault's path, an etcd vault's pin file,
// the identity ($ARCA_IDENTITY when the table names none; identity.KeyPath
// when $ARCA_IDENTITY_KEY holds the identity, see identityPath), and the
// password and TLS files. v shares no slice with the config.
func (c *Config) ExpandVault(name string, v VaultConfig) (VaultConfig, error) {
	v.Recipients, v.Endpoints = slices.Clone(v.Recipients), slices.Clone(v.Endpoints)
	var err error
	key := "vaults." + name
	if v.Kind == KindFile {
		if v.Path, err = c.pathOr(v.Path, key+".path", c.dataDir, name+".vault"); err != nil {
			return VaultConfig{}, err
		}
	}
	if v.Kind == KindEtcd {
		v.PinFile = c.pinFile(name, v.Prefix)
	}
	for _, f := range []struct {
		p    *string
		what string
	}{{&v.PasswordFile, "password_file"}, {&v.TLSCA, "tls_ca"}, {&v.TLSCert, "tls_cert"}, {&v.TLSKey, "tls_key"}} {
		if *f.p != "" {
			if *f.p, err = c.expand(*f.p, key+"."+f.what); err != nil {
				return VaultConfig{}, err
			}
		}
	}
	if v.Identity, err = c.identityPath(v.Identity, key); err != nil {
		return VaultConfig{}, err
	}
	return v, nil
}

// identityPath is the identity file of the vault table key, whose
// identity key is p. $ARCA_IDENTITY_KEY, when set, is the identity of
// every vault (identity.KeyPath), and is refused when the table or
// $ARCA_IDENTITY also names a file: which one is meant is not guessed.
func (c *Config) identityPath(p, key string) (string, error) {
	switch {
	case c.identityKey && p != "":
		return "", fmt.Errorf("%s.identity names an identity file, and $%s holds an identity: set only one", key, identity.KeyEnv)
	case c.identityKey && c.identityEnv != "":
		return "", fmt.Errorf("$ARCA_IDENTITY names an identity file, and $%s holds an identity: set only one", identity.KeyEnv)
	case c.identityKey:
		return identity.KeyPath, nil
	case p == "" && c.identityEnv != "":
		return c.expandHome(c.identityEnv, "ARCA_IDENTITY")
	}
	return c.pathOr(p, key+".identity", c.configDir, "identity.txt")
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
		return "", fmt.Errorf("HOME is not set; needed for the default %s", what)
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
		return "", fmt.Errorf("HOME is not set; needed to expand ~/ in %s", what)
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
