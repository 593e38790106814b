package ops

import (
	"context"
	"fmt"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/identity"
)

// StatusResult is what is in effect for this process: the config file and
// how it was found, the env and why, the audit file, and each env's vault.
// It holds no value and no secret: paths, names and public keys.
type StatusResult struct {
	Config       string      `json:"config"`        // the file, "" when none
	ConfigOrigin string      `json:"config_origin"` // pinned, implicit (./arca.toml), user, none
	Env          string      `json:"env"`           // the env a ref without a pin gets
	EnvFrom      string      `json:"env_from"`      // why: what the caller said, the config's default_env, the default
	EnvProblem   string      `json:"env_problem,omitempty"`
	AuditFile    string      `json:"audit_file"`
	Envs         []EnvStatus `json:"envs"`
}

// EnvStatus is one env's vault, and whether it answered.
type EnvStatus struct {
	Name       string   `json:"name"`
	Vault      string   `json:"vault"`
	Kind       Kind     `json:"kind"`
	Path       string   `json:"path,omitempty"`      // a file vault's file
	Endpoints  []string `json:"endpoints,omitempty"` // a shared vault's members
	Prefix     string   `json:"prefix,omitempty"`
	Identity   string   `json:"identity"`
	PublicKey  string   `json:"public_key,omitempty"`
	Records    int      `json:"records"`
	Recipients []string `json:"recipients,omitempty"`
	Reachable  bool     `json:"reachable"`
	Problem    string   `json:"problem,omitempty"` // why it did not answer, or is not usable
}

// Status reports what is in effect. envFrom names where the process
// context's env came from ("--env", "$ARCA_ENV"), "" when it has none.
// Each env's vault is opened and listed (metadata only) to see that it
// answers; nothing is written and nothing is audited.
func (s *Service) Status(ctx context.Context, envFrom string) (StatusResult, error) {
	res := StatusResult{Config: s.cfg.Path, ConfigOrigin: s.cfg.Origin.String(), EnvFrom: envFrom}
	if res.EnvFrom == "" {
		res.EnvFrom = "the default"
		if s.cfg.DefaultEnv != "" {
			res.EnvFrom = "the config's default_env"
		}
	}
	env, err := s.cfg.ResolveEnv("", "", s.ctxEnv)
	res.Env = env
	if err != nil {
		res.Env, res.EnvProblem = s.ctxEnv, err.Error()
	}
	if res.AuditFile, err = s.cfg.AuditFile(); err != nil {
		return res, err
	}
	for _, name := range s.cfg.EnvNames() {
		res.Envs = append(res.Envs, s.envStatus(ctx, name))
	}
	return res, nil
}

// envStatus opens env's vault and lists it; a failure is its Problem.
func (s *Service) envStatus(ctx context.Context, env string) EnvStatus {
	st := EnvStatus{Name: env}
	name, vc, err := s.cfg.VaultFor(env)
	if err != nil {
		st.Problem = err.Error()
		return st
	}
	st.Vault, st.Kind, st.Path, st.Endpoints, st.Prefix, st.Identity = name, vc.Kind, vc.Path, vc.Endpoints, vc.Prefix, vc.Identity
	if ids, err := s.keys.Load(vc.Identity); err == nil {
		if rs := identity.RecipientsOf(ids); len(rs) > 0 {
			st.PublicKey = fmt.Sprint(rs[0])
		}
	}
	store, err := s.store(env)
	if err == nil {
		var metas []vault.Meta
		if metas, err = store.List(ctx); err == nil {
			st.Records = len(metas)
		}
	}
	if err == nil {
		if k, ok := store.(vault.Keyed); ok {
			st.Recipients, err = k.Recipients(ctx)
		}
	}
	st.Reachable = err == nil
	if err != nil {
		st.Problem = asError(err).Error()
	}
	return st
}

// IdentityResult is the identity env's vault opens with.
type IdentityResult struct {
	Env       string `json:"env"`
	Path      string `json:"path"`
	PublicKey string `json:"public_key"`
}

// Identity returns the path and public key of the identity env's vault
// (the process context's env when "") opens with.
func (s *Service) Identity(env string) (IdentityResult, error) {
	env, err := s.cfg.ResolveEnv("", env, s.ctxEnv)
	if err != nil {
		return IdentityResult{}, err
	}
	_, vc, err := s.cfg.VaultFor(env)
	if err != nil {
		return IdentityResult{}, err
	}
	key, err := s.ownRecipient(env)
	return IdentityResult{Env: env, Path: vc.Identity, PublicKey: key}, err
}

// ownRecipient is the public key of the identity env's vault is opened with.
func (s *Service) ownRecipient(env string) (string, error) {
	_, vc, err := s.cfg.VaultFor(env)
	if err != nil {
		return "", err
	}
	ids, err := s.keys.Load(vc.Identity)
	if err != nil {
		return "", &Error{Code: manifest.OpError, Msg: err.Error(), Err: err}
	}
	rs := identity.RecipientsOf(ids)
	if len(rs) == 0 {
		return "", Errorf(manifest.OpError, "identity %s holds no X25519 identity, and no age plugin identity whose recipient a comment of its file names", vc.Identity)
	}
	return fmt.Sprint(rs[0]), nil
}
