package ops

import (
	"strings"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops/config"
	"github.com/arca-secrets/arca/ops/ref"
)

// ParseRef parses s as an arca:// ref (see package ref). Every failure is
// bad_request.
func ParseRef(s string) (ref.Ref, error) {
	r, err := ref.Parse(s)
	if err != nil {
		return ref.Ref{}, &Error{Code: manifest.BadRequest, Msg: err.Error(), Err: err}
	}
	return r, nil
}

// ResolveEnv picks the env: pin, else reqEnv, else ctxEnv (the --env flag or
// ARCA_ENV, chosen by the caller), else default_env, else "default". An
// invalid or unconfigured env is bad_request.
func (c *Config) ResolveEnv(pin, reqEnv, ctxEnv string) (string, error) {
	env := pin
	for _, e := range [...]string{reqEnv, ctxEnv, c.DefaultEnv, config.Default} {
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
	if c.HasEnv(env) {
		return nil
	}
	// EnvNames is never empty: with no [envs] it is ["default"].
	return Errorf(manifest.BadRequest, "unknown env %q (configured: %s)", env, strings.Join(c.EnvNames(), ", "))
}

// VaultFor returns the name and config of env's vault, paths expanded and
// defaults applied. With no [envs], env "default" uses vault "default":
// [vaults.default] when configured, else the embedded file vault. An
// invalid or unconfigured env is bad_request; a vault that is not
// configured, or a default path that cannot be made, is op_error.
func (c *Config) VaultFor(env string) (name string, v VaultConfig, err error) {
	if err := c.checkEnv(env); err != nil {
		return "", VaultConfig{}, err
	}
	name = config.Default
	if len(c.Envs) > 0 {
		name = c.Envs[env].Vault
	}
	v, ok := c.Vaults[name]
	switch {
	case ok:
	case len(c.Envs) == 0:
		v = VaultConfig{Kind: KindFile}
	default:
		return "", VaultConfig{}, Errorf(manifest.OpError, "env %q: vault %q is not configured", env, name)
	}
	if v, err = c.ExpandVault(name, v); err != nil {
		return "", VaultConfig{}, asError(err)
	}
	return name, v, nil
}
