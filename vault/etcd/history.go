package etcd

import (
	"context"
	"errors"
	"slices"
	"strings"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/arca-secrets/arca/vault"
)

// SetHistory implements vault.Store: the settings the handle's writes
// follow from now on (vault.Step).
func (e *Vault) SetHistory(h vault.History) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.history = h
}

// Chain implements vault.Store: the name's key, read in one round trip
// guarded by the header as every read is, both its parts opened and
// checked against each other.
func (e *Vault) Chain(ctx context.Context, name string) (vault.Chain, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ctx, cancel := e.deadline(ctx)
	defer cancel()
	var slot string
	resp, err := e.read(ctx, false, func() []clientv3.Op {
		slot = e.k.Slot(name)
		return []clientv3.Op{clientv3.OpGet(e.recordKey(slot))}
	})
	if errors.Is(err, errNoVault) {
		return vault.Chain{}, vault.ErrNotFound
	}
	if err != nil {
		return vault.Chain{}, err
	}
	kvs := resp.Responses[0].GetResponseRange().Kvs
	if len(kvs) == 0 {
		return vault.Chain{}, vault.ErrNotFound
	}
	c, err := e.openChain(e.k, slot, name, kvs[0])
	if err != nil {
		return vault.Chain{}, err
	}
	if !c.Known() {
		return vault.Chain{}, vault.ErrNotFound
	}
	return c, nil
}

// Chains implements vault.Store: every name's chain, read in pages at one
// revision (eachRecord) as Records reads them, sorted by name.
func (e *Vault) Chains(ctx context.Context) ([]vault.Chain, error) {
	e.lockForBulk()
	defer e.mu.Unlock()
	cs := []vault.Chain{}
	err := e.eachChain(ctx, func() { cs = cs[:0] }, func(c vault.Chain) { cs = append(cs, c) })
	if err != nil {
		return nil, err
	}
	slices.SortFunc(cs, func(a, b vault.Chain) int { return strings.Compare(a.Name, b.Name) })
	return cs, nil
}

// ListDeleted implements vault.Store: the soft-deleted names, each the
// metadata of the version rm removed with Touch.DeletedAt, sorted by name.
func (e *Vault) ListDeleted(ctx context.Context) ([]vault.Meta, error) {
	e.lockForBulk()
	defer e.mu.Unlock()
	metas := []vault.Meta{}
	err := e.eachChain(ctx, func() { metas = metas[:0] }, func(c vault.Chain) {
		if c.Deleted() && len(c.Previous) > 0 {
			m := c.Previous[0].Meta
			m.Touch = &vault.Touch{DeletedAt: c.DeletedAt}
			metas = append(metas, m)
		}
	})
	if err != nil {
		return nil, err
	}
	return vault.SortByName(metas), nil
}

// eachChain calls fn with the chain of every name the vault holds
// anything of, read by eachRecord (begin runs before each try); a vault
// that is not there yet holds none. Callers hold e.mu.
func (e *Vault) eachChain(ctx context.Context, begin func(), fn func(vault.Chain)) error {
	err := e.eachRecord(ctx, begin, func(slot string, kv *mvccpb.KeyValue) error {
		c, err := e.openChain(e.k, slot, "", kv)
		if err == nil && c.Known() {
			fn(c)
		}
		return err
	})
	if errors.Is(err, errNoVault) {
		return nil
	}
	return err
}
