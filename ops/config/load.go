package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

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
	c, err := parse(data, p, p, getenv)
	if err != nil {
		return nil, err
	}
	c.Origin = origin
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

// document is the config as decoded. Its tables tell an omitted timeout_ms
// (nil) from an explicit one, which the timeout rule needs; so do those of
// services and actions for their other bounds.
type document struct {
	DefaultEnv string               `toml:"default_env"`
	Envs       map[string]EnvConfig `toml:"envs"`
	Vaults     map[string]vaultDoc  `toml:"vaults"`
	Guardrails Guardrails           `toml:"guardrails"`
	Audit      AuditConfig          `toml:"audit"`
	Serve      struct {
		PDP       *pdpDoc          `toml:"pdp"`
		Grants    GrantsConfig     `toml:"grants"`
		Approvals *ApprovalsConfig `toml:"approvals"`
	} `toml:"serve"`
	Deploy   []Deploy              `toml:"deploy"`
	Run      RunConfig             `toml:"run"`
	Services map[string]serviceDoc `toml:"services"` // useload.go
	Actions  map[string]actionDoc  `toml:"actions"`
}

// vaultDoc is a [vaults.NAME] table as decoded.
type vaultDoc struct {
	VaultConfig
	TimeoutMS *int        `toml:"timeout_ms"`
	History   *historyDoc `toml:"history"` // history.go
}

// pdpDoc is the [serve.pdp] table as decoded.
type pdpDoc struct {
	PDPConfig
	TimeoutMS *int `toml:"timeout_ms"`
}

// Parse parses and validates data; name (the file) prefixes messages.
// getenv stands in for os.Getenv; nil means os.Getenv.
func Parse(data []byte, name string, getenv func(string) string) (*Config, error) {
	return parse(data, name, "", getenv)
}

// parse is Parse of the config file at path ("" when none), against whose
// directory its relative paths are resolved.
func parse(data []byte, name, path string, getenv func(string) string) (*Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	doc, err := decode(data, name)
	if err != nil {
		return nil, err
	}
	c := newConfig(getenv)
	c.Path = path
	c.DefaultEnv, c.Envs = doc.DefaultEnv, doc.Envs
	c.Guardrails, c.Audit, c.Deploy, c.Run = doc.Guardrails, doc.Audit, doc.Deploy, doc.Run
	if doc.Vaults != nil {
		c.Vaults = make(map[string]VaultConfig, len(doc.Vaults))
		for vn, v := range doc.Vaults {
			v.VaultConfig.TimeoutMS = timeoutMS(v.TimeoutMS)
			v.VaultConfig.History, _ = resolveHistory(v.History) // validate reports its problem
			c.Vaults[vn] = v.VaultConfig
		}
	}
	if p := doc.Serve.PDP; p != nil {
		pdp := p.PDPConfig
		pdp.TimeoutMS = timeoutMS(p.TimeoutMS)
		c.Serve.PDP = &pdp
	}
	c.Serve.Grants, c.Serve.Approvals = doc.Serve.Grants, doc.Serve.Approvals
	if err := c.validate(name, doc); err != nil {
		return nil, err
	}
	if err := c.resolveUse(name, doc); err != nil {
		return nil, err
	}
	c.finish()
	return c, nil
}
