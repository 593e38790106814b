package etcd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// lockTTL is how long, in seconds, a writer that died keeps a record
// locked: its lease lapses after this and the lock with it.
const lockTTL = 10

// recordLock is this handle's hold on one record's write lock: a key
// P/lock/<slot>/<lease> bound to the handle's lease. The oldest such key
// of a slot holds the lock. The key names the slot id and a lease, nothing
// else.
type recordLock struct {
	key  string
	slot string
	kv   *mvccpb.KeyValue // the record as read under the lock; nil: absent
}

// lockRecord takes the lock of name's record and reads the record, in one
// round trip when nobody else holds it: the same transaction puts the lock
// key and returns the header, the lock's holder and the record. A lock
// another writer holds is let go and tried again after a pause, until the
// op's deadline. Callers hold e.mu.
func (e *Vault) lockRecord(ctx context.Context, name string) (*recordLock, error) {
	for pause := 5 * time.Millisecond; ; pause = min(2*pause, 100*time.Millisecond) {
		// Every try may need a new session: a failed unlock ends one.
		if err := e.ensureSession(ctx); err != nil {
			return nil, err
		}
		l, held, err := e.tryLock(ctx, name)
		if err != nil || held {
			return l, err
		}
		if err := sleep(ctx, pause); err != nil {
			return nil, fmt.Errorf("%s: another writer held the record's lock past the deadline (%v)", e.where(), e.timeout)
		}
	}
}

// tryLock makes one attempt; held is false when another writer holds the
// lock (this handle's key is then removed again).
func (e *Vault) tryLock(ctx context.Context, name string) (l *recordLock, held bool, err error) {
	slot := e.k.Slot(name)
	l = &recordLock{slot: slot, key: fmt.Sprintf("%slock/%s/%x", e.prefix, slot, e.sess.Lease())}
	pfx := e.prefix + "lock/" + slot + "/"
	reads := []clientv3.Op{clientv3.OpGet(pfx, clientv3.WithFirstCreate()...), clientv3.OpGet(e.headerKey()), clientv3.OpGet(e.recordKey(slot))}
	var resp *clientv3.TxnResponse
	err = e.do(ctx, func(ctx context.Context) error {
		resp, err = e.cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(l.key), "=", 0)).
			Then(append([]clientv3.Op{clientv3.OpPut(l.key, "", clientv3.WithLease(e.sess.Lease()))}, reads...)...).
			Else(reads...).Commit()
		return err
	})
	if err != nil {
		// The lock key may have landed: let the lease lapse, and the key
		// with it, rather than hold the record from every other writer.
		e.endSession()
		return nil, false, err
	}
	rs := resp.Responses
	if resp.Succeeded {
		rs = rs[1:]
	}
	owner, hdr, rec := rs[0].GetResponseRange().Kvs, rs[1].GetResponseRange().Kvs, rs[2].GetResponseRange().Kvs
	if len(hdr) == 0 || hdr[0].ModRevision != e.hdrRev {
		// The header moved (a rekey, new recipients): adopt it and start
		// over, since the slot may have changed with the key.
		e.unlock(l)
		if err := e.adoptHeader(hdr); err != nil {
			return nil, false, err
		}
		return nil, false, nil
	}
	if len(owner) == 0 || string(owner[0].Key) != l.key {
		e.unlock(l)
		return nil, false, nil
	}
	if len(rec) > 0 {
		l.kv = rec[0]
	}
	return l, true, nil
}

// unlock lets go of l, briefly. If the cluster does not confirm it, the
// handle's lease is let go instead, so that the lock key lapses with it
// (within lockTTL) rather than stay while this handle lives.
func (e *Vault) unlock(l *recordLock) {
	ctx, cancel := context.WithTimeout(context.Background(), attemptTimeout)
	defer cancel()
	if _, err := e.cli.Delete(ctx, l.key); err != nil {
		e.endSession()
	}
}

// ensureSession grants the lease this handle's locks hang on, or a new one
// when the last lapsed.
func (e *Vault) ensureSession(ctx context.Context) error {
	if e.sess != nil {
		select {
		case <-e.sess.Done():
			e.sess = nil
		default:
			return nil
		}
	}
	e.revokeOrphans()
	var lease *clientv3.LeaseGrantResponse
	err := e.do(ctx, func(ctx context.Context) error {
		var err error
		lease, err = e.cli.Grant(ctx, lockTTL)
		return err
	})
	if err != nil {
		return err
	}
	s, err := concurrency.NewSession(e.cli, concurrency.WithLease(lease.ID))
	if err != nil {
		return err
	}
	e.sess = s
	return nil
}

// endSession stops the keep-alives and revokes the lease, briefly. A
// lease the cluster did not confirm revoked is kept, to be revoked before
// the next session starts: etcd restarts a lease's countdown when it elects
// a leader, so waiting for it to lapse could hold a record long after the
// cluster is back.
func (e *Vault) endSession() {
	if e.sess == nil {
		return
	}
	e.sess.Orphan()
	if !e.revoke(e.sess.Lease()) {
		if len(e.orphans) == maxOrphans {
			e.orphans = e.orphans[1:] // the oldest lapses on its own
		}
		e.orphans = append(e.orphans, e.sess.Lease())
	}
	e.sess = nil
}

// maxOrphans bounds the leases a handle remembers to revoke.
const maxOrphans = 16

// revokeOrphans revokes the leases earlier sessions left, keeping those
// the cluster still does not confirm.
func (e *Vault) revokeOrphans() {
	kept := e.orphans[:0]
	for _, id := range e.orphans {
		if !e.revoke(id) {
			kept = append(kept, id)
		}
	}
	e.orphans = kept
}

// revoke revokes lease id, and with it the keys bound to it; true when the
// cluster confirmed it (or no longer knows the lease).
func (e *Vault) revoke(id clientv3.LeaseID) bool {
	ctx, cancel := context.WithTimeout(context.Background(), attemptTimeout)
	defer cancel()
	_, err := e.cli.Revoke(ctx, id)
	return err == nil || errors.Is(err, rpctypes.ErrLeaseNotFound)
}

// sleep waits d, or until ctx is done (its error).
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
