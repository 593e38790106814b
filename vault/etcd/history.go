package etcd

import (
	"context"
	"errors"

	"github.com/arca-secrets/arca/vault"
)

var errNoHistory = errors.New("history is not built yet")

// SetHistory implements vault.Store.
func (v *Vault) SetHistory(vault.History) {}

// Chain implements vault.Store.
func (v *Vault) Chain(context.Context, string) (vault.Chain, error) { return vault.Chain{}, errNoHistory }

// ListDeleted implements vault.Store.
func (v *Vault) ListDeleted(context.Context) ([]vault.Meta, error) { return nil, errNoHistory }

// Chains implements vault.Store.
func (v *Vault) Chains(context.Context) ([]vault.Chain, error) { return nil, errNoHistory }

// Changes implements vault.Store.
func (v *Vault) Changes(context.Context, string, int) (vault.Changes, error) {
	return vault.Changes{}, errNoHistory
}
