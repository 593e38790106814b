package ops

import (
	"context"
	"time"

	"filippo.io/age"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/identity"
)

// What the packages over ops (ops/bulk, ops/access) build on: the
// config, routing and vaults of a Service, for the audited changes they
// make with Begin. Nothing here writes an audit event.

// Config returns the configuration s routes by.
func (s *Service) Config() *Config { return s.cfg }

// Now returns the time s stamps records with.
func (s *Service) Now() time.Time { return s.now() }

// ResolveEnv resolves env ("" for the process context's) to a configured
// env, as a request that names no ref does.
func (s *Service) ResolveEnv(env string) (string, error) {
	return s.cfg.ResolveEnv("", env, s.ctxEnv)
}

// Store returns the open vault behind env, opening it on first use; s
// closes it on Close.
func (s *Service) Store(env string) (vault.Store, error) { return s.store(env) }

// OpenVault opens the vault vc describes, named name in messages, with the
// backends s was given. The caller closes it.
func (s *Service) OpenVault(name string, vc VaultConfig) (vault.Store, error) {
	st, err := s.backends.Open(name, vc, s.now)
	return st, AsError(err)
}

// CreateVault makes the empty vault vc describes, wrapped to recipients,
// keeping one already there; created says which happened.
func (s *Service) CreateVault(ctx context.Context, name string, vc VaultConfig, recipients []age.Recipient) (created bool, err error) {
	created, err = s.backends.Create(ctx, name, vc, recipients)
	return created, AsError(err)
}

// VaultProblems says what is wrong around the vault vc describes (see
// Backends.Problems).
func (s *Service) VaultProblems(vc VaultConfig) []string { return s.backends.Problems(vc) }

// WithConfig is a Service like s (its audit writer, clock, process env and
// backends) routing by cfg. It opens its own vaults: close it.
func (s *Service) WithConfig(cfg *Config) *Service {
	return New(Options{Config: cfg, Audit: s.audit, Now: s.now, Env: s.ctxEnv, Backends: s.backends})
}

// Keyed resolves env ("" for the process context's) to its vault, named
// name, as a vault.Keyed: one whose recipients and data key can change
// (both kinds' can).
func (s *Service) Keyed(env string) (resolved, name string, k vault.Keyed, err error) {
	env, err = s.ResolveEnv(env)
	if err != nil {
		return "", "", nil, err
	}
	name, vc, err := s.cfg.VaultFor(env)
	if err != nil {
		return "", "", nil, err
	}
	st, err := s.store(env)
	if err != nil {
		return env, name, nil, err
	}
	k, ok := st.(vault.Keyed)
	if !ok {
		return env, name, nil, Errorf(manifest.OpError, "vault %q (kind %s) cannot change its recipients or data key", name, vc.Kind)
	}
	return env, name, k, nil
}

// ParseRecipients parses recipients for CreateVault, dropping repeats. An
// error names the list (where) and the entry's position, never its text: a
// secret key pasted there must not be printed.
func ParseRecipients(where string, rs []string) ([]age.Recipient, error) {
	out := make([]age.Recipient, 0, len(rs))
	seen := map[string]bool{}
	for i, r := range rs {
		if seen[r] {
			continue
		}
		seen[r] = true
		p, err := identity.ParseRecipient(r)
		if err != nil {
			return nil, Errorf(manifest.OpError, "%s entry %d %v", where, i, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// ValidateValue checks a value as put does: not empty, at most
// manifest.MaxValue bytes, UTF-8. Its error is bad_request.
func ValidateValue(v vault.Secret) error { return validateValue(v) }

// AsError returns err as it is when an *Error is in its chain, else as an
// op_error carrying its text; nil stays nil.
func AsError(err error) error { return asError(err) }
