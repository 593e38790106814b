package etcd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/internal/seal"
)

// Rekey implements vault.Keyed. Every name is read, a page at a time but
// all at one revision (eachPage), re-sealed (its current record and every
// kept version, written as a chain) under a new data key and vault id and written beside the old records, a batch at a time; then the
// header is switched over in one transaction that also deletes the old
// records (one range delete, however many they are). That transaction
// holds only if no record was written since the snapshot; otherwise the
// new records are deleted and the vault is as it was. Each page, batch and
// the switch have the op's timeout to themselves.
func (e *Vault) Rekey(ctx context.Context) (int, error) {
	e.lockForBulk()
	defer e.mu.Unlock()
	// A busy vault may see a write land during a pass: try again, a few
	// times, from a new snapshot.
	var n int
	var err error
	for range rekeyTries {
		if n, err = e.rekeyOnce(ctx); !errors.Is(err, errChanged) {
			break
		}
	}
	return n, err
}

// rekeyTries bounds the passes of one rekey.
const rekeyTries = 3

// rekeyOnce is one pass of Rekey. Callers hold e.mu.
func (e *Vault) rekeyOnce(ctx context.Context) (int, error) {
	hctx, cancel := e.deadline(ctx)
	err := e.loadHeader(hctx)
	cancel()
	if err != nil {
		return 0, err
	}
	nk, err := seal.Fresh()
	if err != nil {
		return 0, err
	}
	b := &sealBatch{e: e, k: nk, prefix: e.prefix + "r/" + nk.VaultIDHex() + "/"}
	writtenRev, err := e.eachPage(ctx, func(kvs []*mvccpb.KeyValue) error {
		for _, kv := range kvs {
			c, err := e.openChain(e.k, e.slotOf(kv), "", kv)
			if err != nil {
				return fmt.Errorf("%w (rm the record or restore it before a rekey)", err)
			}
			if err := b.add(ctx, c); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = b.flush(ctx)
	}
	if errors.Is(err, errCompacted) {
		err = fmt.Errorf("%s %w", e.where(), errChanged) // a new pass reads at a new revision
	}
	if err != nil {
		if b.sent {
			e.dropUnused(b.prefix, nk)
		}
		return 0, err
	}
	return b.n, e.switchTo(ctx, nk, b.prefix, writtenRev)
}

// switchTo makes the records written under prefix, sealed with nk, the
// vault: a header for nk, wrapped to the recipients of the header the
// records were read under, put in one transaction with the delete of the
// old records, if neither that header nor the written marker moved.
func (e *Vault) switchTo(ctx context.Context, nk *seal.Keys, prefix string, writtenRev int64) error {
	h, err := e.nextHeader(nk)
	if err != nil {
		e.dropUnused(prefix, nk)
		return err
	}
	sctx, cancel := e.deadline(ctx)
	defer cancel()
	err = e.swapHeader(sctx, h,
		[]clientv3.Op{clientv3.OpDelete(e.recordsKey(), clientv3.WithPrefix()), clientv3.OpPut(e.writtenKey(), "")},
		clientv3.Compare(clientv3.ModRevision(e.writtenKey()), "=", writtenRev))
	if err != nil {
		switch derr := e.dropUnused(prefix, nk); {
		case errors.Is(derr, errHeaderUnread):
			return fmt.Errorf("%s: %w: %v", e.where(), vault.ErrUnknownOutcome, err)
		case !errors.Is(derr, errInUse):
			return err
		}
		// The switch landed after all (its reply was lost, or a teammate
		// has built on it since): the new records are the vault now.
	}
	e.k, e.hdrRev = nil, 0
	// This machine moves its pin at once, so that the header from before
	// the rekey cannot be put back on it; only along the chain, as any
	// load would. Best effort: the next load pins the new key anyway.
	var nh header
	if json.Unmarshal(h, &nh) == nil {
		_ = e.checkPin(nh, nk)
	}
	return nil
}

// nextHeader is the header that hands the vault over to nk: the
// recipients of the header in use, its key history with nk's link added.
func (e *Vault) nextHeader(nk *seal.Keys) ([]byte, error) {
	rs, err := seal.ParseRecipients(e.hdr.Recipients)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", e.where(), err)
	}
	chain, err := extendChain(e.hdr.Chain, e.k, nk)
	if err != nil {
		return nil, err
	}
	return sealHeader(etcdFormat, nk, rs, chain)
}

// errInUse is a rekey's new records that the header names after all;
// errHeaderUnread is not knowing, the header being unreadable.
var (
	errInUse        = errors.New("the header names these records")
	errHeaderUnread = errors.New("the header could not be read")
)

// dropUnused deletes what a failed rekey wrote under prefix, unless the
// header is one of the new key's after all: its vault id is the new one and
// it authenticates under the new key (a header merely naming the new vault
// id, which anyone watching the cluster could write, does not count). The
// delete is one transaction conditioned on the header being the one read.
// When the header cannot be read, nothing is deleted: records under a
// vault id no header names are never read.
func (e *Vault) dropUnused(prefix string, nk *seal.Keys) error {
	ctx, cancel := context.WithTimeout(context.Background(), e.timeout)
	defer cancel()
	var resp *clientv3.GetResponse
	err := e.do(ctx, func(ctx context.Context) error {
		var err error
		resp, err = e.cli.Get(ctx, e.headerKey())
		return err
	})
	if err != nil || len(resp.Kvs) == 0 {
		return errHeaderUnread // keep them
	}
	var h header
	if json.Unmarshal(resp.Kvs[0].Value, &h) != nil {
		return errHeaderUnread
	}
	if h.VaultID == nk.VaultIDHex() && etcdMAC(nk, h) == h.MAC {
		return errInUse
	}
	cur := string(resp.Kvs[0].Value)
	return e.do(ctx, func(ctx context.Context) error {
		_, err := e.cli.Txn(ctx).If(clientv3.Compare(clientv3.Value(e.headerKey()), "=", cur)).
			Then(clientv3.OpDelete(prefix, clientv3.WithPrefix())).Commit()
		return err
	})
}

// sealBatch seals a rekey's records with k and writes them under prefix, a
// transaction at a time: etcd refuses requests over 1.5 MiB and
// transactions over 128 operations by default.
type sealBatch struct {
	e      *Vault
	k      *seal.Keys
	prefix string
	ops    []clientv3.Op
	size   int  // bytes sealed in ops
	n      int  // current records sealed in all
	sent   bool // a batch was sent, and may have landed
}

// The bounds of one batch.
const (
	rekeyBatchOps   = 64
	rekeyBatchBytes = 512 << 10
)

// add seals the chain c (its current record and kept versions) into the
// batch, writing the batch first when c would take it past its bounds.
func (b *sealBatch) add(ctx context.Context, c vault.Chain) error {
	slot := b.k.Slot(c.Name)
	stored, err := appendStored(make([]byte, 0, chainSizeHint(c)), b.k, slot, c)
	if err != nil {
		return err
	}
	if len(b.ops) > 0 && b.size+len(stored) > rekeyBatchBytes {
		if err := b.flush(ctx); err != nil {
			return err
		}
	}
	b.ops = append(b.ops, clientv3.OpPut(b.prefix+slot, string(stored)))
	if c.HasCurrent {
		b.n++
	}
	if b.size += len(stored); len(b.ops) >= rekeyBatchOps || b.size >= rekeyBatchBytes {
		return b.flush(ctx)
	}
	return nil
}

// flush writes the records sealed since the last flush, in one transaction.
func (b *sealBatch) flush(ctx context.Context) error {
	if len(b.ops) == 0 {
		return nil
	}
	ctx, cancel := b.e.deadline(ctx)
	defer cancel()
	b.sent = true
	err := b.e.doBulk(ctx, func(ctx context.Context) error {
		_, err := b.e.cli.Txn(ctx).Then(b.ops...).Commit()
		return err
	})
	b.ops, b.size = b.ops[:0], 0
	return err
}
