package ops

import (
	"github.com/arca-secrets/arca/ops/config"
)

// Config is the configuration as ops reads it: a config.Config, with the
// routing (ResolveEnv, VaultFor) and the guardrails (Guardrail) on top.
// Build it with LoadConfig or ParseConfig.
type Config struct {
	config.Config
}

// VaultConfig is one [vaults.NAME] table, paths expanded (see VaultFor).
type VaultConfig = config.VaultConfig

// Kind is a vault's backend (see config.Kind).
type Kind = config.Kind

// The kinds of vault (see config.KindFile).
const (
	KindFile = config.KindFile
	KindEtcd = config.KindEtcd
)

// OriginImplicit is the origin of a config found as ./arca.toml in the
// working directory (see config.Origin).
const OriginImplicit = config.OriginImplicit

// LoadConfig finds, parses and validates the config as config.Load does.
// Every failure is op_error.
func LoadConfig(flagPath string, getenv func(string) string) (*Config, error) {
	c, err := config.Load(flagPath, getenv)
	if err != nil {
		return nil, asError(err)
	}
	return &Config{Config: *c}, nil
}

// ParseConfig parses and validates data as config.Parse does; name (the
// file) prefixes messages. Every failure is op_error.
func ParseConfig(data []byte, name string, getenv func(string) string) (*Config, error) {
	c, err := config.Parse(data, name, getenv)
	if err != nil {
		return nil, asError(err)
	}
	return &Config{Config: *c}, nil
}

// AuditFile returns where CLI audit events go (see config.Config.AuditFile).
// A default that cannot be made (HOME unset) is op_error.
func (c *Config) AuditFile() (string, error) {
	p, err := c.Config.AuditFile()
	return p, asError(err)
}
