package etcd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Record locks. A writer takes the lock of each record it writes before it
// reads it: a key P/lock/r/<slot>/<lease> bound to its session's lease. Of
// the keys under one slot, the one created first holds that record's
// lock; the others wait their turn in that order, watching for the keys
// ahead of them to go. Writers of different records never wait for each
// other.
//
// A writer takes the locks of all the records it is about to write in one
// transaction, so its new keys share one create revision, and it waits
// only with keys of that one revision: before it waits, it lets go of any
// lock it held from an earlier write and takes it again in a transaction
// of its own. Whoever it waits for was queued before it, so no two
// writers ever wait for each other.
//
// A handle keeps the locks of its last committed write or group while it
// is idle, for holdIdle, so that a session writing the same records again
// pays one raft write (its commit) rather than two. A commit lets go of
// the locks it no longer needs in its own transaction, and of those a
// writer waits for right after it.

// holdIdle is how long a handle keeps its record locks after its last
// write (Vault.holdFor).
const holdIdle = 50 * time.Millisecond

// maxLockSlots is the most records one lock transaction takes: each is a
// put, a read of the record and a read of its lock's queue, under etcd's
// default of 128 operations in a transaction. It is also the most records
// a group writes (maxGroupWrites): its commit changes and counts each,
// and lets go of as many locks left from before.
const maxLockSlots = 40

// recordRead is one record as read under its lock.
type recordRead struct {
	slot string
	kv   *mvccpb.KeyValue // nil: absent
}

// errLockLost is a lock this handle held, or waited for, that went from
// under it (its lease lapsed, or its key was deleted).
var errLockLost = errors.New("a record lock was lost")

// errWaitedPastDeadline is a writer still queued for a lock at its
// deadline.
var errWaitedPastDeadline = errors.New("waited for a record lock past the deadline")

func (e *Vault) locksPrefix() string { return e.prefix + "lock/r/" }

func (e *Vault) slotLocks(slot string) string { return e.locksPrefix() + slot + "/" }

// lockKey is this handle's key in slot's lock queue. Callers hold a session.
func (e *Vault) lockKey(slot string) string {
	return fmt.Sprintf("%s%x", e.slotLocks(slot), e.sess.Lease())
}

// owns is the compare that holds while slot's key is still this handle's.
func (e *Vault) owns(slot string) clientv3.Cmp {
	return clientv3.Compare(clientv3.CreateRevision(e.lockKey(slot)), "=", e.locks[slot])
}

// lockRecords takes the locks of the records names are written to (at
// most maxLockSlots of them; more are refused) and reads those records
// under them, one per distinct slot, in the order first named. It waits
// for other writers until ctx's deadline, and then gives up its place.
// Callers hold e.mu and a loaded header.
func (e *Vault) lockRecords(ctx context.Context, names []string) ([]recordRead, error) {
	return e.withLocks(ctx, names, func(slots []string) ([]recordRead, error) {
		if len(slots) > maxLockSlots {
			return nil, fmt.Errorf("%s: %d records to lock at once, more than %d", e.where(), len(slots), maxLockSlots)
		}
		t, err := e.tryLocks(ctx, slots)
		if err != nil || len(t.blocked) == 0 {
			return t.recs, err
		}
		if len(e.locks) > len(t.fresh) {
			// It holds locks from before this attempt: let go of them all
			// and queue again, so that it waits with keys of one revision.
			return nil, errLockLost
		}
		if err := e.waitTurn(ctx, t.blocked, t.rev); err != nil {
			return nil, err
		}
		return e.readLocked(ctx, slots)
	})
}

// withLocks runs attempt on the slots of names, in a session, until it
// answers anything but errLockLost (a lock that went, or a header that
// moved: the slots are worked out again). Whatever stops it but success
// lets go of every lock; a wait past the deadline says who held it.
func (e *Vault) withLocks(ctx context.Context, names []string, attempt func(slots []string) ([]recordRead, error)) ([]recordRead, error) {
	for {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s: the record locks kept going before the deadline (%v)", e.where(), e.timeout)
		}
		if err := e.ensureSession(ctx); err != nil {
			return nil, err
		}
		recs, err := attempt(e.slotsOf(names))
		switch {
		case err == nil:
			return recs, nil
		case errors.Is(err, errLockLost):
			e.releaseLocks() // what is left of them: start afresh
		case errors.Is(err, errWaitedPastDeadline):
			e.releaseLocks() // its place in the queues with them
			return nil, e.heldPastDeadline()
		default:
			e.releaseLocks()
			return nil, err
		}
	}
}

func (e *Vault) heldPastDeadline() error {
	return fmt.Errorf("%s: another writer held a record's lock past the deadline (%v)", e.where(), e.timeout)
}

// slotsOf is the distinct slots of names, in the order first named.
func (e *Vault) slotsOf(names []string) []string {
	slots := make([]string, 0, len(names))
	for _, n := range names {
		if s := e.k.Slot(n); !slices.Contains(slots, s) {
			slots = append(slots, s)
		}
	}
	return slots
}

// lockTry is what one attempt at a set of locks found.
type lockTry struct {
	recs    []recordRead // the records, as read with the locks
	fresh   []string     // slots whose key this attempt put
	blocked []string     // of those, the ones another writer's key is ahead in
	rev     int64        // the attempt's revision
}

// tryLocks puts this handle's key in the queue of every slot whose lock
// it does not hold, and reads the records and the queues, in one
// transaction that holds only while the header is as loaded and the locks
// it holds are still its own. A header that moved is adopted, and a held
// lock that went is errLockLost: either way the caller starts again. Every
// key put is in e.locks after it, the blocked ones included.
func (e *Vault) tryLocks(ctx context.Context, slots []string) (lockTry, error) {
	cmps := []clientv3.Cmp{e.headerUnchanged()}
	var puts, reads []clientv3.Op
	var fresh []string
	for _, s := range slots {
		if _, held := e.locks[s]; held {
			cmps = append(cmps, e.owns(s))
			continue
		}
		fresh = append(fresh, s)
		puts = append(puts, clientv3.OpPut(e.lockKey(s), "", clientv3.WithLease(e.sess.Lease())))
	}
	for _, s := range slots {
		reads = append(reads, clientv3.OpGet(e.recordKey(s)))
	}
	for _, s := range fresh {
		reads = append(reads, clientv3.OpGet(e.slotLocks(s), clientv3.WithFirstCreate()...))
	}
	var resp *clientv3.TxnResponse
	err := e.do(ctx, func(ctx context.Context) error {
		var err error
		resp, err = e.cli.Txn(ctx).If(cmps...).Then(append(puts, reads...)...).Else(clientv3.OpGet(e.headerKey())).Commit()
		return err
	})
	if err != nil {
		// The keys may have landed: let the lease lapse, and the keys
		// with it, rather than keep other writers waiting.
		e.endSession()
		return lockTry{}, err
	}
	if !resp.Succeeded {
		return lockTry{}, e.lockTxnFailed(resp.Responses[0].GetResponseRange().Kvs)
	}
	t := lockTry{rev: resp.Header.Revision, fresh: fresh}
	rs := resp.Responses[len(puts):]
	for i, s := range slots {
		t.recs = append(t.recs, recordRead{slot: s, kv: first(rs[i].GetResponseRange().Kvs)})
	}
	if e.locks == nil {
		e.locks = make(map[string]int64, len(fresh))
	}
	for i, s := range fresh {
		e.locks[s] = t.rev
		if q := first(rs[len(slots)+i].GetResponseRange().Kvs); q == nil || string(q.Key) != e.lockKey(s) {
			t.blocked = append(t.blocked, s)
		} else {
			e.locks[s] = q.CreateRevision
		}
	}
	return t, nil
}

// lockTxnFailed settles a lock transaction whose compares failed: the
// header moved (it is adopted, and every lock let go of, since their slots
// were of the old data key) or a held lock went.
func (e *Vault) lockTxnFailed(hdr []*mvccpb.KeyValue) error {
	if len(hdr) == 0 || hdr[0].ModRevision != e.hdrRev {
		e.releaseLocks()
		if err := e.adoptHeader(hdr); err != nil {
			return err
		}
	}
	return errLockLost
}

func first(kvs []*mvccpb.KeyValue) *mvccpb.KeyValue {
	if len(kvs) == 0 {
		return nil
	}
	return kvs[0]
}

// readLocked reads the records of slots, whose locks this handle holds, in
// one transaction that holds only while they are still its own and the
// header is as loaded.
func (e *Vault) readLocked(ctx context.Context, slots []string) ([]recordRead, error) {
	cmps := []clientv3.Cmp{e.headerUnchanged()}
	reads := make([]clientv3.Op, 0, len(slots))
	for _, s := range slots {
		cmps = append(cmps, e.owns(s))
		reads = append(reads, clientv3.OpGet(e.recordKey(s)))
	}
	var resp *clientv3.TxnResponse
	err := e.do(ctx, func(ctx context.Context) error {
		var err error
		resp, err = e.cli.Txn(ctx).If(cmps...).Then(reads...).Else(clientv3.OpGet(e.headerKey())).Commit()
		return err
	})
	if err != nil {
		return nil, err
	}
	if !resp.Succeeded {
		return nil, e.lockTxnFailed(resp.Responses[0].GetResponseRange().Kvs)
	}
	recs := make([]recordRead, len(slots))
	for i, s := range slots {
		recs[i] = recordRead{slot: s, kv: first(resp.Responses[i].GetResponseRange().Kvs)}
	}
	return recs, nil
}

// tryLockNow takes the lock of name's record without waiting, and reads
// it: what a group's later write does, since a group must not wait with
// writes in hand. ok is false when another writer holds it (this handle's
// key is then taken back out of the queue).
func (e *Vault) tryLockNow(ctx context.Context, name string) (r recordRead, ok bool, err error) {
	slot := e.k.Slot(name)
	if _, held := e.locks[slot]; held {
		recs, err := e.readLocked(ctx, []string{slot})
		if err != nil {
			return recordRead{}, false, err
		}
		return recs[0], true, nil
	}
	t, err := e.tryLocks(ctx, []string{slot})
	switch {
	case err != nil:
		return recordRead{}, false, err
	case len(t.blocked) > 0:
		e.releaseSlots(t.blocked)
		return recordRead{}, false, nil
	}
	return t.recs[0], true, nil
}
