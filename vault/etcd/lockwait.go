package etcd

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// orphanRetry is how often a waiter tries again to revoke the leases of
// its own earlier sessions that the cluster did not confirm revoked: one
// of them may be the key it waits behind, and a new leader restarts such a
// lease's countdown rather than let it lapse.
const orphanRetry = 50 * time.Millisecond

// waitTurn waits until this handle's keys are first in the queues of
// slots (queued by the attempt at revision rev). It watches for deletions
// from just after rev, in the queue it waits in (in every queue when it
// waits in several), and looks at a queue again only when the key just
// ahead of its own goes: a release wakes one waiter, not every one, and a
// writer reads nothing while it waits. A watch that breaks (a leader lost,
// history compacted) is made again from where it looked last.
func (e *Vault) waitTurn(ctx context.Context, slots []string, rev int64) error {
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	var wch clientv3.WatchChan
	from := rev + 1
	watched := e.locksPrefix() // every queue, or the one it waits in
	if len(slots) == 1 {
		watched = e.slotLocks(slots[0])
	}
	q, err := e.lookAgain(ctx, slots)
	for err == nil && len(q.waiting) > 0 {
		var retry <-chan time.Time
		if len(e.orphans) > 0 {
			e.revokeOrphans()
			retry = time.After(orphanRetry)
		}
		if wch == nil {
			wch = e.cli.Watch(wctx, watched, clientv3.WithPrefix(), clientv3.WithRev(from), clientv3.WithFilterPut())
		}
		select {
		case <-ctx.Done():
			return errWaitedPastDeadline
		case <-e.sess.Done():
			return errLockLost
		case <-retry:
			continue
		case wr, ok := <-wch:
			if !ok || wr.Err() != nil {
				wch = nil // look, and watch again from there
			} else if !q.wakes(e, wr.Events) {
				continue
			}
		}
		q, err = e.lookAgain(ctx, q.waiting)
		from = q.rev + 1
	}
	if ctx.Err() != nil {
		return errWaitedPastDeadline
	}
	return err
}

// maxQueueRead is how much of a record's lock queue a waiter reads to find
// the key just ahead of its own. A queue longer than that (more writers
// of one record at once) is watched whole.
const maxQueueRead = 256

// queues is what a waiter last read of the queues it waits in.
type queues struct {
	waiting []string        // the slots whose lock it still waits for
	ahead   map[string]bool // the key just ahead of its own in each of them
	whole   []string        // slots where that key is not known: any deletion wakes it
	rev     int64           // the revision they were read at
}

// wakes reports whether evs delete a key a waiter waits behind.
func (q queues) wakes(e *Vault, evs []*clientv3.Event) bool {
	for _, ev := range evs {
		key := string(ev.Kv.Key)
		if q.ahead[key] {
			return true
		}
		rest := strings.TrimPrefix(key, e.locksPrefix())
		if i := strings.IndexByte(rest, '/'); i > 0 && slices.Contains(q.whole, rest[:i]) {
			return true
		}
	}
	return false
}

// lookAgain reads the queues of slots, in creation order: those this
// handle's key now heads are its own (left out of the answer's waiting);
// for the others it notes the key just ahead of its own. A queue this
// handle's key is no longer in is errLockLost.
func (e *Vault) lookAgain(ctx context.Context, slots []string) (queues, error) {
	reads := make([]clientv3.Op, len(slots))
	for i, s := range slots {
		reads[i] = clientv3.OpGet(e.slotLocks(s), clientv3.WithPrefix(), clientv3.WithKeysOnly(),
			clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend), clientv3.WithLimit(maxQueueRead))
	}
	var resp *clientv3.TxnResponse
	err := e.do(ctx, func(ctx context.Context) error {
		var err error
		resp, err = e.cli.Txn(ctx).Then(reads...).Commit()
		return err
	})
	if err != nil {
		return queues{}, err
	}
	q := queues{ahead: map[string]bool{}, rev: resp.Header.Revision}
	for i, s := range slots {
		kvs, mine := resp.Responses[i].GetResponseRange().Kvs, e.lockKey(s)
		at := slices.IndexFunc(kvs, func(kv *mvccpb.KeyValue) bool { return string(kv.Key) == mine })
		switch {
		case at == 0:
			e.locks[s] = kvs[0].CreateRevision
			continue
		case at > 0:
			q.ahead[string(kvs[at-1].Key)] = true
		case len(kvs) < maxQueueRead:
			return queues{}, errLockLost // its key is no longer queued
		default:
			q.whole = append(q.whole, s)
		}
		q.waiting = append(q.waiting, s)
	}
	return q, nil
}

// commitLocked runs ops (commitTxn) if cmps hold, for the writes of the
// records in slots, read under their locks. The same transaction lets go
// of the locks this handle held from before that the commit does not use,
// and counts each slot's queue: the locks another writer waits for are let
// go of right after, the others kept for holdIdle. The commit does not ask
// that the locks be still this handle's: the compares on what was read are
// what keep an update from being lost, and a lock that lapsed since the
// read changes nothing they would let through. Callers hold e.mu.
func (e *Vault) commitLocked(ctx context.Context, cmps []clientv3.Cmp, ops []clientv3.Op, slots []string) error {
	var stale []string
	for s := range e.locks {
		if !slices.Contains(slots, s) {
			stale = append(stale, s)
		}
	}
	if len(stale) > maxLockSlots {
		e.releaseSlots(stale) // a failed release ends the session
		stale = nil
	}
	if e.sess == nil {
		// The session its locks hung on ended since the read (a lock
		// transaction or a release that failed ends it): what was read is
		// unguarded.
		return fmt.Errorf("%s: %w", e.where(), errLeaseLapsed)
	}
	n := len(ops)
	ops = slices.Clip(ops)
	for _, s := range slots {
		ops = append(ops, clientv3.OpGet(e.slotLocks(s), clientv3.WithPrefix(), clientv3.WithCountOnly()))
	}
	for _, s := range stale {
		ops = append(ops, clientv3.OpDelete(e.lockKey(s)))
	}
	resp, err := e.commitTxn(ctx, false, cmps, ops)
	if err != nil {
		e.releaseLocks() // they may be gone: start afresh
		return err
	}
	for _, s := range stale {
		delete(e.locks, s)
	}
	if resp != nil {
		var waited []string
		for i, s := range slots {
			if resp.Responses[n+i].GetResponseRange().Count > 1 {
				waited = append(waited, s)
			}
		}
		e.releaseSlots(waited)
	}
	e.armRelease()
	return nil
}

// keepLock is how a write that did not commit leaves the locks: still
// held, until the release already armed, or for holdIdle if none is. It
// never puts off a release, so a session whose writes keep failing
// (denied, not found) lets a waiter in as soon as one that commits would.
func (e *Vault) keepLock() {
	if e.idle == nil {
		e.armRelease()
	}
}

// armRelease lets go of the locks once they have gone unused for holdIdle.
func (e *Vault) armRelease() {
	if len(e.locks) == 0 {
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
			e.releaseLocks()
		}
	})
	e.idle = t
}

// releaseLocks lets go of every record lock this handle holds or waits
// for.
func (e *Vault) releaseLocks() {
	if len(e.locks) > 0 && e.sess != nil {
		keys := make([]string, 0, len(e.locks))
		for s := range e.locks {
			keys = append(keys, e.lockKey(s))
		}
		e.deleteLockKeys(keys)
	}
	e.dropLocks()
}

// releaseSlots lets go of the locks of slots.
func (e *Vault) releaseSlots(slots []string) {
	if len(slots) == 0 || e.sess == nil {
		return
	}
	keys := make([]string, len(slots))
	for i, s := range slots {
		keys[i] = e.lockKey(s)
	}
	for _, s := range slots {
		delete(e.locks, s)
	}
	e.deleteLockKeys(keys)
	if len(e.locks) == 0 {
		e.disarm()
	}
}

// dropLocks forgets the record locks without a round trip: their keys are
// gone or about to lapse with the session's lease.
func (e *Vault) dropLocks() {
	e.locks = nil
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

// maxTxnOps is etcd's default bound on the operations of a transaction.
const maxTxnOps = 128

// deleteLockKeys deletes keys, briefly, in transactions of at most
// maxTxnOps. If the cluster does not confirm it, the handle's lease is let
// go instead, so that the keys lapse with it (within lockTTL) rather than
// stay while this handle lives.
func (e *Vault) deleteLockKeys(keys []string) {
	ctx, cancel := context.WithTimeout(context.Background(), attemptTimeout)
	defer cancel()
	for part := range slices.Chunk(keys, maxTxnOps) {
		dels := make([]clientv3.Op, len(part))
		for i, k := range part {
			dels[i] = clientv3.OpDelete(k)
		}
		if _, err := e.cli.Txn(ctx).Then(dels...).Commit(); err != nil {
			e.endSession()
			return
		}
	}
}

// lockForBulk takes e.mu for an op that may hold it a while (a batch, a
// list, a check, a rekey) and lets go of the record locks first, since the
// op does not use them and another writer may be waiting for them.
func (e *Vault) lockForBulk() {
	e.mu.Lock()
	e.releaseLocks()
}
