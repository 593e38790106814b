package opstest

import (
	"context"
	"sync"
	"time"

	"filippo.io/age"

	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/vaulttest"
)

// MemBackends opens one vault held in memory per vault name
// (vaulttest.MemVault: its writes follow vault.Step, the rule every
// backend follows), with the history its config gives, as backend.Kinds
// opens the real ones: what a test of the ops of versions and history runs
// against, whatever the state of the real backends.
type MemBackends struct {
	mu     sync.Mutex
	vaults map[string]*vaulttest.MemVault
}

// Open implements ops.Backends: a new handle on the vault named name.
func (b *MemBackends) Open(name string, vc ops.VaultConfig, now func() time.Time) (vault.Store, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.vaults == nil {
		b.vaults = map[string]*vaulttest.MemVault{}
	}
	v, ok := b.vaults[name]
	if !ok {
		v = vaulttest.NewMemVault()
		b.vaults[name] = v
	}
	st := v.Open(now)
	st.SetHistory(vc.HistorySettings())
	return st, nil
}

// Create implements ops.Backends: a vault in memory needs no creating.
func (b *MemBackends) Create(context.Context, string, ops.VaultConfig, []age.Recipient) (bool, error) {
	return true, nil
}

// Problems implements ops.Backends.
func (b *MemBackends) Problems(ops.VaultConfig) []string { return nil }
