package etcd

import (
	"context"
	"errors"
	"slices"
	"strings"

	"go.etcd.io/etcd/api/v3/mvccpb"

	"github.com/arca-secrets/arca/vault"
)

// Records implements vault.Store: every name's current record, read in
// pages at one revision (eachRecord), as List reads them.
func (e *Vault) Records(ctx context.Context) ([]vault.Record, error) {
	e.lockForBulk()
	defer e.mu.Unlock()
	var recs []vault.Record
	err := e.eachRecord(ctx, func() { recs = recs[:0] }, func(slot string, kv *mvccpb.KeyValue) error {
		r, ok, err := e.openCurrent(e.k, slot, "", kv)
		if ok {
			recs = append(recs, r)
		}
		return err
	})
	if errors.Is(err, errNoVault) {
		return []vault.Record{}, nil
	}
	if err != nil {
		return nil, err
	}
	if recs == nil {
		recs = []vault.Record{}
	}
	slices.SortFunc(recs, func(a, b vault.Record) int { return strings.Compare(a.Name, b.Name) })
	return recs, nil
}
