package etcd

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/internal/seal"
)

// The bounds of one commit unit of a batch: one transaction. etcd refuses,
// by default, a transaction with more than 128 compares or 128 operations
// in a branch (--max-txn-ops) and a request over 1.5 MiB
// (--max-request-bytes). A unit compares the header and every record it
// writes, and puts or deletes every record beside the written marker and
// the token: 100 records leave room under 128. Its bytes are each
// record's sealed size and its key twice (in the compare and in the put),
// bounded to 1 MiB so that the request, framing included, stays well
// under 1.5 MiB. A unit always takes at least one write, whatever its
// size: a record alone is at most what Apply would send.
const (
	maxUnitWrites = 100
	maxUnitBytes  = 1 << 20
	// sealOverhead bounds what sealing adds to a record's name and value:
	// the nonce, the record's header (version and times) and the tag, 75
	// bytes in all today.
	sealOverhead = 128
)

// ApplyBatch implements vault.Store: ws goes in units of at most
// maxUnitWrites writes and maxUnitBytes, each its own transaction. For
// each unit, in order: one read of the header and the unit's records,
// the change of every write prepared (vault.Step, at one time for the
// unit) and sealed, approve called once with the unit's metadata, then
// one transaction that commits the unit whole, if the header and every
// record are as read. A unit takes no record lock (a lock per record
// would take more operations than a transaction may hold); the compares
// on every record's mod revision are what keeps a concurrent write from
// being lost: whichever commits second fails with the conflict, nothing
// of it changed. A unit that fails stops the batch there and is not
// tried again, since approve has seen it. Each unit has the op's timeout
// to itself; ctx ending stops the batch between units.
func (e *Vault) ApplyBatch(ctx context.Context, b vault.Batch, approve vault.ApproveBatch) (int, error) {
	if err := vault.CheckBatch(b); err != nil {
		return 0, fmt.Errorf("%s: %w; nothing was changed", e.where(), err)
	}
	n := b.Len()
	if n == 0 {
		return 0, nil
	}
	e.lockForBulk()
	defer e.mu.Unlock()
	if err := e.loadForBatch(ctx, b.At(0)); err != nil {
		return 0, err
	}
	ws := make([]vault.Write, 0, maxUnitWrites)
	for start := 0; start < n; {
		if err := ctx.Err(); err != nil {
			return start, fmt.Errorf("%s: the batch stopped after %d of its %d writes: %w", e.where(), start, n, err)
		}
		ws = e.unit(ws[:0], b, start)
		landed, err := e.applyUnit(ctx, ws, start, approve)
		if err != nil {
			return start, err
		}
		start += landed
	}
	return n, nil
}

// loadForBatch is loadForWrite for a batch whose first write is w, on a
// deadline of its own: only the first write counts, since when it finds
// no vault, it is the first to fail unless it creates one.
func (e *Vault) loadForBatch(ctx context.Context, w vault.Write) error {
	ctx, cancel := e.deadline(ctx)
	defer cancel()
	if err := e.loadForWrite(ctx, w); err != nil {
		return fmt.Errorf("write 1 of the batch: %w; nothing was changed", err)
	}
	return nil
}

// unit appends to ws the writes of the unit that starts at write start
// of b: as many as fit maxUnitWrites and maxUnitBytes, and at least one.
func (e *Vault) unit(ws []vault.Write, b vault.Batch, start int) []vault.Write {
	size := 0
	for i := start; i < b.Len() && len(ws) < maxUnitWrites; i++ {
		w := b.At(i)
		cost := e.writeCost(w)
		if len(ws) > 0 && size+cost > maxUnitBytes {
			break
		}
		size += cost
		ws = append(ws, w)
	}
	return ws
}

// writeCost is what w adds to its unit's transaction as far as can be
// told before anything is read: its record's key twice (compare and
// change) and the sealed record its name and value make. The versions
// the name keeps add to it; prepareUnit cuts a unit they make too large.
func (e *Vault) writeCost(w vault.Write) int {
	return 2*(len(e.recordsKey())+2*seal.SlotSize) + sealOverhead + len(w.Name) + w.Value.Len()
}

// applyUnit prepares ws (the writes first to first+len(ws)-1 of the
// batch, counted from 0), has approve see them and commits them in one
// transaction, on a deadline of its own. It answers how many of ws it
// committed: all of them, unless the names' kept versions made them too
// large for one transaction, when it commits those that fit (at least
// one) and leaves the rest to the next unit. Callers hold e.mu.
func (e *Vault) applyUnit(ctx context.Context, ws []vault.Write, first int, approve vault.ApproveBatch) (int, error) {
	ctx, cancel := e.deadline(ctx)
	defer cancel()
	if err := e.ensureSession(ctx); err != nil {
		return 0, e.unitErr(first, len(ws), err)
	}
	u, err := e.readUnit(ctx, ws)
	if err != nil {
		return 0, e.unitErr(first, len(ws), err)
	}
	if err := e.prepareUnit(u, ws, first); err != nil {
		return 0, err
	}
	n := len(u.metas)
	if err := approve(u.metas); err != nil {
		return 0, err
	}
	if _, err := e.commitTxn(ctx, true, u.cmps, u.ops); err != nil {
		if i, cur, ok := e.staleVersion(ctx, ws[:n], err); ok {
			return 0, fmt.Errorf("write %d of the batch: %w; nothing of writes %d to %d was changed", first+i+1, &vault.ConflictError{Current: cur}, first+1, first+n)
		}
		return 0, e.unitErr(first, n, err)
	}
	return n, nil
}

// staleVersion settles a commit of ws that lost to another write (err is
// errConflict): when a write of ws was conditioned on a version that is
// no longer current, it answers that write's index and the current
// version, the conflict ws would have met had the other write landed
// before ws were read. Otherwise ok is false. Callers hold e.mu.
func (e *Vault) staleVersion(ctx context.Context, ws []vault.Write, err error) (i int, current uint64, ok bool) {
	if !errors.Is(err, errConflict) || !slices.ContainsFunc(ws, func(w vault.Write) bool { return w.IfVersion != nil }) {
		return 0, 0, false
	}
	u, err := e.readUnit(ctx, ws)
	if err != nil {
		return 0, 0, false
	}
	for i, w := range ws {
		if w.IfVersion == nil {
			continue
		}
		var c vault.Chain
		if u.kvs[i] != nil {
			if c, err = e.openChain(e.k, u.slots[i], w.Name, u.kvs[i]); err != nil {
				continue
			}
		}
		if cur := c.CurrentVersion(); cur != *w.IfVersion {
			return i, cur, true
		}
	}
	return 0, 0, false
}

// unitErr says which writes of the batch err stopped.
func (e *Vault) unitErr(first, n int, err error) error {
	return fmt.Errorf("writes %d to %d of the batch: %w", first+1, first+n, err)
}

// unit is one commit unit being prepared: per write, the record's slot
// and the record as read (nil: absent); then the compares and changes of
// its transaction and the metadata approve sees.
type unit struct {
	slots []string
	kvs   []*mvccpb.KeyValue
	cmps  []clientv3.Cmp
	ops   []clientv3.Op
	metas []vault.Meta
}

// readUnit reads the records ws write, in one transaction guarded by the
// header (e.read: a header that moved, a rekey say, is adopted and the
// records read again under it, their slots computed anew).
func (e *Vault) readUnit(ctx context.Context, ws []vault.Write) (*unit, error) {
	u := &unit{}
	resp, err := e.read(ctx, true, func() []clientv3.Op {
		u.slots = u.slots[:0]
		ops := make([]clientv3.Op, 0, len(ws))
		for _, w := range ws {
			slot := e.k.Slot(w.Name)
			u.slots = append(u.slots, slot)
			ops = append(ops, clientv3.OpGet(e.recordKey(slot)))
		}
		return ops
	})
	if err != nil {
		return nil, err
	}
	if len(resp.Responses) != len(ws) {
		return nil, fmt.Errorf("%s: the cluster answered %d reads for %d records", e.where(), len(resp.Responses), len(ws))
	}
	u.kvs = make([]*mvccpb.KeyValue, len(ws))
	for i, r := range resp.Responses {
		if kvs := r.GetResponseRange().Kvs; len(kvs) > 0 {
			u.kvs[i] = kvs[0]
		}
	}
	return u, nil
}

// prepareUnit computes what each write of u makes of its name, as Apply
// would (step), and seals it: u's compares, changes and metadata. The
// unit is cut short, before a write that would take it past
// maxUnitBytes, when the names' kept versions make it larger than
// writeCost foretold. An error names the write by its position in the
// batch (first: the unit's first, from 0), never the record.
func (e *Vault) prepareUnit(u *unit, ws []vault.Write, first int) error {
	now := e.now().UTC()
	u.cmps = make([]clientv3.Cmp, 0, len(ws))
	u.ops = make([]clientv3.Op, 0, len(ws)+2) // room for commitTxn's two
	u.metas = make([]vault.Meta, 0, len(ws))
	size := 0
	for i, w := range ws {
		key := e.recordKey(u.slots[i])
		_, meta, stored, err := e.step(u.slots[i], w, u.kvs[i], now)
		if err != nil {
			return fmt.Errorf("write %d of the batch: %w; nothing of writes %d to %d was changed", first+i+1, err, first+1, first+len(ws))
		}
		cost := 2*len(key) + len(stored)
		if i > 0 && size+cost > maxUnitBytes {
			break
		}
		size += cost
		var rev int64 // 0: absent
		if u.kvs[i] != nil {
			rev = u.kvs[i].ModRevision
		}
		u.cmps = append(u.cmps, clientv3.Compare(clientv3.ModRevision(key), "=", rev))
		u.ops = append(u.ops, recordChange(key, stored))
		u.metas = append(u.metas, meta)
	}
	return nil
}
