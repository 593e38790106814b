package etcd

import (
	"context"
	"errors"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// lockTTL is how long, in seconds, a writer that died keeps its record
// locks: its lease lapses after this and the locks with it.
const lockTTL = 10

// ensureSession grants the lease this handle's locks hang on, or a new one
// when the last lapsed.
func (e *Vault) ensureSession(ctx context.Context) error {
	if e.sess != nil {
		select {
		case <-e.sess.Done():
			e.dropLocks() // its key lapsed with the lease
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

// sessionLive reports whether this handle has a session whose lease has
// not been seen to lapse: the locks it holds are still its own, as far as
// it can tell without a round trip.
func (e *Vault) sessionLive() bool {
	if e.sess == nil {
		return false
	}
	select {
	case <-e.sess.Done():
		return false
	default:
		return true
	}
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
	e.dropLocks()
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
