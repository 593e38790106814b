package etcd

import (
	"context"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// holdIdle is how long a handle keeps the writer lock after its last
// write (Vault.holdFor): a session's next write within it is one raft
// write (its commit) rather than two. A writer that waits for the lock is
// let in at the holder's next commit, or when this runs out.
const holdIdle = 50 * time.Millisecond

// Pauses between looks at the lock while another writer holds it.
const (
	firstLockPause = 2 * time.Millisecond
	maxLockPause   = 25 * time.Millisecond
)

// writerLock is this handle's hold on the vault's writer lock: a key
// P/lock/writer/<lease> bound to the session's lease. The key created
// first holds the lock; the others wait their turn in that order. The key
// names a lease, nothing else.
type writerLock struct {
	key string
	rev int64 // the key's create revision
}

// recordRead is one record as read under the writer lock.
type recordRead struct {
	slot string
	kv   *mvccpb.KeyValue // nil: absent
}

func (e *Vault) lockPrefix() string { return e.prefix + "lock/writer/" }

func (e *Vault) lockKey() string {
	return fmt.Sprintf("%s%x", e.lockPrefix(), e.sess.Lease())
}

// owns is the compare that holds while l is still this handle's.
func (l *writerLock) owns() clientv3.Cmp {
	return clientv3.Compare(clientv3.CreateRevision(l.key), "=", l.rev)
}

// lockedRead reads name's record under the writer lock, taking the lock
// first unless this handle holds it: one round trip either way when no
// other writer holds it. While another does, this handle's key waits its
// turn and the lock is looked at again after a pause, until the op's
// deadline (the key is then taken back). Callers hold e.mu.
func (e *Vault) lockedRead(ctx context.Context, name string) (recordRead, error) {
	var queued clientv3.LeaseID // the lease this handle's key waits under; 0: none
	for pause := firstLockPause; ; {
		if err := e.ensureSession(ctx); err != nil {
			return recordRead{}, err
		}
		if e.held != nil {
			r, ok, err := e.readHeld(ctx, name)
			if err != nil || ok {
				return r, err
			}
			continue // the header moved, or the lock is gone
		}
		r, ok, waiting, err := e.tryLock(ctx, name, queued == e.sess.Lease())
		if err != nil && queued != 0 && ctx.Err() != nil {
			// The deadline came while it looked at the lock again: what
			// it waited for is the other writer (its key went with the
			// session tryLock ended).
			return recordRead{}, e.heldPastDeadline()
		}
		if err != nil || ok {
			return r, err
		}
		if e.held != nil {
			continue // taken, but the header moved: read again
		}
		if queued = 0; waiting {
			queued = e.sess.Lease()
		}
		if len(e.orphans) > 0 {
			// The writer ahead may be this handle's own earlier session,
			// whose lease the cluster did not confirm revoked (a release
			// lost with a leader): revoke it again rather than wait out its
			// countdown, which a new leader restarts.
			e.revokeOrphans()
		}
		if err := sleep(ctx, pause); err != nil {
			e.unqueue()
			return recordRead{}, e.heldPastDeadline()
		}
		pause = min(2*pause, maxLockPause)
	}
}

func (e *Vault) heldPastDeadline() error {
	return fmt.Errorf("%s: another writer held the vault's writer lock past the deadline (%v)", e.where(), e.timeout)
}

// readHeld reads name's record in a transaction that holds only while the
// lock is still this handle's and the header as loaded. ok is false when
// either moved: the header is then adopted, or the lock let go of.
func (e *Vault) readHeld(ctx context.Context, name string) (r recordRead, ok bool, err error) {
	l := e.held
	r.slot = e.k.Slot(name)
	var resp *clientv3.TxnResponse
	err = e.do(ctx, func(ctx context.Context) error {
		resp, err = e.cli.Txn(ctx).If(l.owns(), e.headerUnchanged()).
			Then(clientv3.OpGet(e.recordKey(r.slot))).
			Else(clientv3.OpGet(e.headerKey()), clientv3.OpGet(l.key, clientv3.WithCountOnly())).Commit()
		return err
	})
	if err != nil {
		return recordRead{}, false, err
	}
	if resp.Succeeded {
		if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
			r.kv = kvs[0]
		}
		return r, true, nil
	}
	if resp.Responses[1].GetResponseRange().Count == 0 {
		e.dropLock() // lapsed: take it again
		return recordRead{}, false, nil
	}
	return recordRead{}, false, e.adoptHeader(resp.Responses[0].GetResponseRange().Kvs)
}

// tryLock makes one attempt at the lock and reads name's record in the
// same round trip. The first attempt puts this handle's key (a raft
// write); a queued one only reads, since the key is already there. ok is
// true when the lock is now this handle's (e.held) and r is the record;
// waiting is true when another writer holds it and this handle's key is
// queued behind it (false: the key lapsed, and must be put again).
func (e *Vault) tryLock(ctx context.Context, name string, queued bool) (r recordRead, ok, waiting bool, err error) {
	key := e.lockKey()
	r.slot = e.k.Slot(name)
	reads := []clientv3.Op{
		clientv3.OpGet(e.lockPrefix(), clientv3.WithFirstCreate()...),
		clientv3.OpGet(e.headerKey()),
		clientv3.OpGet(e.recordKey(r.slot)),
		clientv3.OpGet(key, clientv3.WithCountOnly()),
	}
	var resp *clientv3.TxnResponse
	err = e.do(ctx, func(ctx context.Context) error {
		txn := e.cli.Txn(ctx)
		if queued {
			txn = txn.Then(reads...)
		} else {
			txn = txn.If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
				Then(append([]clientv3.Op{clientv3.OpPut(key, "", clientv3.WithLease(e.sess.Lease()))}, reads...)...).
				Else(reads...)
		}
		resp, err = txn.Commit()
		return err
	})
	if err != nil {
		// The key may have landed: let the lease lapse, and the key with
		// it, rather than keep every other writer waiting.
		e.endSession()
		return recordRead{}, false, false, err
	}
	rs := resp.Responses
	if !queued && resp.Succeeded {
		rs = rs[1:]
	}
	first, hdr, rec := rs[0].GetResponseRange().Kvs, rs[1].GetResponseRange().Kvs, rs[2].GetResponseRange().Kvs
	if rs[3].GetResponseRange().Count == 0 {
		return recordRead{}, false, false, nil
	}
	if len(first) == 0 || string(first[0].Key) != key {
		return recordRead{}, false, true, nil
	}
	e.held = &writerLock{key: key, rev: first[0].CreateRevision}
	if len(hdr) == 0 || hdr[0].ModRevision != e.hdrRev {
		// The header moved (a rekey, new recipients): adopt it; the caller
		// reads again under the lock, since the slot may have changed.
		return recordRead{}, false, false, e.adoptHeader(hdr)
	}
	if len(rec) > 0 {
		r.kv = rec[0]
	}
	return r, true, false, nil
}

// unqueue takes back this handle's key from the queue for the lock.
func (e *Vault) unqueue() {
	if e.sess != nil {
		e.deleteLockKey(e.lockKey())
	}
}

// afterCommit settles the lock after a commit under it: let go at once
// when another writer waits (waiters counts the lock's keys, this
// handle's among them; -1: unknown), kept for holdIdle otherwise.
func (e *Vault) afterCommit(waiters int64) {
	if waiters > 1 {
		e.releaseLock()
		return
	}
	e.armRelease()
}

// keepLock is how a write that did not commit leaves the lock: still held,
// until the release already armed, or for holdIdle if none is. It never
// puts off a release, so a session whose writes keep failing (denied,
// not found) lets a waiter in as soon as one that commits would.
func (e *Vault) keepLock() {
	if e.idle == nil {
		e.armRelease()
	}
}

// armRelease lets go of the lock once it has gone unused for holdIdle.
func (e *Vault) armRelease() {
	if e.held == nil {
		return
	}
	e.disarm()
	// A timer stopped too late finds e.idle no longer its own and does
	// nothing. t is set before the callback can take e.mu: callers hold it.
	var t *time.Timer
	t = time.AfterFunc(e.holdFor, func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.idle == t {
			e.releaseLock()
		}
	})
	e.idle = t
}

// releaseLock lets go of the writer lock, if held.
func (e *Vault) releaseLock() {
	if e.held == nil {
		return
	}
	key := e.held.key
	e.dropLock()
	e.deleteLockKey(key)
}

// dropLock forgets the writer lock without a round trip: its key is gone
// or is about to lapse with the session's lease.
func (e *Vault) dropLock() {
	e.held = nil
	e.disarm()
}

// disarm stops the armed release, if there is one.
func (e *Vault) disarm() {
	if e.idle == nil {
		return
	}
	e.idle.Stop()
	e.idle = nil
	if e.disarmed != nil {
		e.disarmed()
	}
}

// deleteLockKey deletes key, briefly. If the cluster does not confirm it,
// the handle's lease is let go instead, so that the key lapses with it
// (within lockTTL) rather than stay while this handle lives.
func (e *Vault) deleteLockKey(key string) {
	ctx, cancel := context.WithTimeout(context.Background(), attemptTimeout)
	defer cancel()
	if _, err := e.cli.Delete(ctx, key); err != nil {
		e.endSession()
	}
}

// lockForBulk takes e.mu for an op that may hold it a while (a batch, a
// list, a check, a rekey) and lets go of the writer lock first, since the
// op does not use it and another writer may be waiting for it.
func (e *Vault) lockForBulk() {
	e.mu.Lock()
	e.releaseLock()
}
