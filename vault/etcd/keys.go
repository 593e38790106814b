package etcd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"filippo.io/age"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/internal/seal"
)

// Recipients implements vault.Keyed.
func (e *Vault) Recipients(ctx context.Context) ([]string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ctx, cancel := e.deadline(ctx)
	defer cancel()
	if err := e.loadHeader(ctx); err != nil {
		return nil, err
	}
	return slices.Clone(e.hdr.Recipients), nil
}

// SetRecipients implements vault.Keyed: the header is replaced only if it did not
// change since it was read.
func (e *Vault) SetRecipients(ctx context.Context, from []string, rs []age.Recipient) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	ctx, cancel := e.deadline(ctx)
	defer cancel()
	if err := e.loadHeader(ctx); err != nil {
		return err
	}
	if !slices.Equal(e.hdr.Recipients, from) {
		return fmt.Errorf("%s: %w", e.where(), vault.ErrRecipientsChanged)
	}
	h, err := sealHeader(e.k, rs, e.hdr.Chain)
	if err != nil {
		return err
	}
	return e.swapHeader(ctx, h, nil)
}

// swapHeader puts the header h in one transaction with extra, if the header
// and (when extra is given) the written marker are unchanged since read.
func (e *Vault) swapHeader(ctx context.Context, h []byte, extra []clientv3.Op, cmps ...clientv3.Cmp) error {
	var resp *clientv3.TxnResponse
	var tries int
	then := append([]clientv3.Op{clientv3.OpPut(e.headerKey(), string(h))}, extra...)
	err := e.do(ctx, func(ctx context.Context) error {
		tries++
		var err error
		resp, err = e.cli.Txn(ctx).If(append(cmps, e.headerUnchanged())...).Then(then...).
			Else(clientv3.OpGet(e.headerKey())).Commit()
		return err
	})
	if err != nil {
		return err
	}
	if !resp.Succeeded {
		kvs := resp.Responses[0].GetResponseRange().Kvs
		if tries == 1 || len(kvs) == 0 || string(kvs[0].Value) != string(h) {
			return fmt.Errorf("%s %w", e.where(), errChanged)
		}
	}
	// It landed. What landed is read back by the next op, whose failure
	// to read it is that op's, not this one's.
	e.k, e.hdrRev = nil, 0
	return nil
}

// rekeyBatch bounds one transaction of re-sealed records: etcd refuses
// requests over 1.5 MiB and transactions over 128 operations by default.
const (
	rekeyBatchOps   = 64
	rekeyBatchBytes = 512 << 10
	rekeyTimeout    = time.Minute
)

// Rekey implements vault.Keyed. Every record is read in one snapshot and
// re-sealed under a new data key and vault id, written beside the old
// records, and the header switched over in one transaction that also
// deletes the old records. That transaction holds only if no record was
// written since the snapshot; otherwise the new records are deleted and
// the vault is as it was.
func (e *Vault) Rekey(ctx context.Context) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, max(e.timeout, rekeyTimeout))
	defer cancel()
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

// errChanged is a header or a vault that changed under a team op.
var errChanged = errors.New("changed while this ran; nothing was changed: run it again")

// rekeyOnce is one pass of Rekey. Callers hold e.mu.
func (e *Vault) rekeyOnce(ctx context.Context) (int, error) {
	if err := e.loadHeader(ctx); err != nil {
		return 0, err
	}
	resp, err := e.read(ctx, true, func() []clientv3.Op {
		return []clientv3.Op{clientv3.OpGet(e.recordsKey(), clientv3.WithPrefix()), clientv3.OpGet(e.writtenKey())}
	})
	if err != nil {
		return 0, err
	}
	var recs []vault.Record
	for _, kv := range resp.Responses[0].GetResponseRange().Kvs {
		r, err := e.open(e.slotOf(kv), "", kv)
		if err != nil {
			return 0, fmt.Errorf("%w (rm the record or restore it before a rekey)", err)
		}
		recs = append(recs, r)
	}
	var writtenRev int64
	if kvs := resp.Responses[1].GetResponseRange().Kvs; len(kvs) > 0 {
		writtenRev = kvs[0].ModRevision
	}
	return len(recs), e.rekeyTo(ctx, recs, writtenRev)
}

// rekeyTo writes recs under a fresh data key and switches to it.
func (e *Vault) rekeyTo(ctx context.Context, recs []vault.Record, writtenRev int64) error {
	rs, err := seal.ParseRecipients(e.hdr.Recipients)
	if err != nil {
		return fmt.Errorf("%s: %w", e.where(), err)
	}
	nk, err := seal.Fresh()
	if err != nil {
		return err
	}
	chain, err := extendChain(e.hdr.Chain, e.k, nk)
	if err != nil {
		return err
	}
	h, err := sealHeader(nk, rs, chain)
	if err != nil {
		return err
	}
	newID := nk.VaultIDHex()
	newPrefix := e.prefix + "r/" + newID + "/"
	if err := e.putSealed(ctx, nk, newPrefix, recs); err != nil {
		e.dropUnused(newPrefix, nk)
		return err
	}
	err = e.swapHeader(ctx, h,
		[]clientv3.Op{clientv3.OpDelete(e.recordsKey(), clientv3.WithPrefix()), clientv3.OpPut(e.writtenKey(), "")},
		clientv3.Compare(clientv3.ModRevision(e.writtenKey()), "=", writtenRev))
	if err != nil {
		switch derr := e.dropUnused(newPrefix, nk); {
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

// putSealed seals recs with k and writes them under prefix, in batches.
func (e *Vault) putSealed(ctx context.Context, k *seal.Keys, prefix string, recs []vault.Record) error {
	var batch []clientv3.Op
	size := 0
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := e.doBulk(ctx, func(ctx context.Context) error {
			_, err := e.cli.Txn(ctx).Then(batch...).Commit()
			return err
		})
		batch, size = batch[:0], 0
		return err
	}
	for _, r := range recs {
		slot := k.Slot(r.Name)
		sealed, err := k.Seal(slot, r)
		if err != nil {
			return err
		}
		batch = append(batch, clientv3.OpPut(prefix+slot, string(sealed)))
		if size += len(sealed); len(batch) >= rekeyBatchOps || size >= rekeyBatchBytes {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}
