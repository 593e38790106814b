package ops

import (
	"context"
	"time"

	"filippo.io/age"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/vault"
)

// Backends opens and creates the vaults a Service routes to, by kind. ops
// names no backend itself, so that what imports ops (arca serve) links only
// the backends its caller passes in: cmd/arca passes ops/backend's Kinds.
type Backends interface {
	// Open opens the vault named name.
	Open(name string, vc VaultConfig, now func() time.Time) (vault.Store, error)
	// Create makes an empty vault whose data key is wrapped to recipients,
	// keeping one already there; created says which happened.
	Create(ctx context.Context, name string, vc VaultConfig, recipients []age.Recipient) (created bool, err error)
	// Problems says what is wrong around a vault that does not open (for a
	// file vault: the modes of its files); nil when nothing is known.
	Problems(vc VaultConfig) []string
}

// noBackends is what a Service without Backends has: every vault is
// unavailable.
type noBackends struct{}

func (noBackends) Open(name string, vc VaultConfig, _ func() time.Time) (vault.Store, error) {
	return nil, unavailable(name, vc)
}

func (noBackends) Create(_ context.Context, name string, vc VaultConfig, _ []age.Recipient) (bool, error) {
	return false, unavailable(name, vc)
}

func (noBackends) Problems(VaultConfig) []string { return nil }

// unavailable is the error for a vault whose kind the Backends in use do
// not have.
func unavailable(name string, vc VaultConfig) error {
	return Errorf(manifest.OpError, "vault %q: kind %q is not available in this build", name, vc.Kind)
}
