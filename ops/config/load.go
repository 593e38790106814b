package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/pelletier/go-toml/v2"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/vault/fsio"
)

// Load finds and parses the config: flagPath (the --config flag), else
// $ARCA_CONFIG (pinned: a missing file is an error); else ./arca.toml in the
// working directory (implicit); else $XDG_CONFIG_HOME/arca/arca.toml, default
// ~/.config/arca/arca.toml (user). None found gives a Config with Origin
// OriginNone. getenv stands in for os.Getenv; nil means os.Getenv.
func Load(flagPath string, getenv func(string) string) (*Config, error) {
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
		return nil, fmt.Errorf("config: cannot locate ./arca.toml: %w", err)
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
	data, err := fsio.ReadFile(p, manifest.MaxConfig)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if origin == OriginPinned {
			return nil, fmt.Errorf("config %s (from %s) does not exist", p, from)
		}
		return nil, nil
	case errors.Is(err, fsio.ErrTooLarge):
		return nil, fmt.Errorf("config %s is larger than the %d-byte cap", p, manifest.MaxConfig)
	case err != nil:
		return nil, fmt.Errorf("config %s: %w", p, unwrapPath(err))
	}
	c, err := Parse(data, p, getenv)
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

// document is the config as decoded: it tells an omitted timeout_ms from an
// explicit one.
type document struct {
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

// Parse parses and validates data; name (the file) prefixes messages.
// getenv stands in for os.Getenv; nil means os.Getenv.
func Parse(data []byte, name string, getenv func(string) string) (*Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	var doc document
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, decodeError(name, err)
	}
	c := newConfig(getenv)
	c.DefaultEnv, c.Envs, c.Vaults = doc.DefaultEnv, doc.Envs, doc.Vaults
	c.Guardrails, c.Audit = doc.Guardrails, doc.Audit
	if p := doc.Serve.PDP; p != nil {
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
