package etcd

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"

	"filippo.io/age"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/arca-secrets/arca/vault"
)

// HoldIdle is holdIdle, for the external benchmarks.
const HoldIdle = holdIdle

// PlantOrphan puts a key in the lock queue of name's record under a
// lease of its own (ttl seconds), first in that queue, and notes the lease
// as one this handle did not get revoked: what a release lost with a
// leader leaves.
func (e *Vault) PlantOrphan(ctx context.Context, ttl int64, name string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.k == nil {
		if err := e.loadHeader(ctx); err != nil {
			return err
		}
	}
	lease, err := e.cli.Grant(ctx, ttl)
	if err != nil {
		return err
	}
	key := fmt.Sprintf("%s%x", e.slotLocks(e.k.Slot(name)), lease.ID)
	if _, err := e.cli.Put(ctx, key, "", clientv3.WithLease(lease.ID)); err != nil {
		return err
	}
	e.releaseLocks()
	e.orphans = append(e.orphans, lease.ID)
	return nil
}

// OnGetSent has f told as each get's round trip is about to be made,
// without the handle's lock held. Call it before the handle is used.
func (e *Vault) OnGetSent(f func()) { e.getSent = f }

// CurrentPart is where a key's value holds its sealed current record: its
// offset and length (0: none).
func CurrentPart(v []byte) (off, n int) {
	cur, _, err := splitStored(v)
	if err != nil || cur == nil {
		return 0, 0
	}
	if !bytes.HasPrefix(v, []byte(chainMagic)) {
		return 0, len(v)
	}
	_, w := binary.Uvarint(v[len(chainMagic):])
	return len(chainMagic) + w, len(cur)
}

// PutLegacy stores r as a vault written before history holds a record:
// the sealed record alone under its key.
func (e *Vault) PutLegacy(ctx context.Context, r vault.Record) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.k == nil {
		if err := e.loadHeader(ctx); err != nil {
			return err
		}
	}
	slot := e.k.Slot(r.Name)
	sealed, err := e.k.Seal(slot, r)
	if err != nil {
		return err
	}
	_, err = e.cli.Put(ctx, e.recordKey(slot), string(sealed))
	return err
}

// KeyOf is the key the vault keeps name under.
func (e *Vault) KeyOf(ctx context.Context, name string) (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.k == nil {
		if err := e.loadHeader(ctx); err != nil {
			return "", err
		}
	}
	return e.recordKey(e.k.Slot(name)), nil
}

// JoinParts is a chain's stored value made of the current record of one
// stored value and the history part of another.
func JoinParts(currentOf, historyOf []byte) []byte {
	cur, _, err1 := splitStored(currentOf)
	_, hist, err2 := splitStored(historyOf)
	if err1 != nil || err2 != nil {
		return nil
	}
	out := append([]byte(chainMagic), binary.AppendUvarint(nil, uint64(len(cur)))...)
	out = append(out, cur...)
	return append(out, hist...)
}

// CreateFormat1 is Create as arca before history made a vault: its header
// of format 1.
func CreateFormat1(ctx context.Context, o Options, recipients []age.Recipient) error {
	cli, r, err := dialEtcd(o)
	if err != nil {
		return err
	}
	defer cli.Close()
	e := &Vault{reach: r, cli: cli, prefix: o.Prefix, timeout: o.Timeout, holdFor: holdIdle}
	created, err := e.createHeader(ctx, etcdFormatV1, recipients)
	if err == nil && !created {
		err = fmt.Errorf("a vault is already there")
	}
	return err
}
