package vault

import (
	"context"
	"errors"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// lockTTL is how long, in seconds, a writer that died keeps a record
// locked: its lease lapses after this and the lock with it.
const lockTTL = 10

// lock takes the cluster-wide lock of slot, so that writers on other
// machines wait their turn instead of failing the commit's comparison. The
// lock key names the slot id and a lease, nothing else. The returned
// function releases it. Callers hold e.mu.
func (e *Etcd) lock(ctx context.Context, slot string) (unlock func(), err error) {
	if err := e.ensureSession(ctx); err != nil {
		return nil, err
	}
	m := concurrency.NewMutex(e.sess, e.prefix+"lock/"+slot+"/")
	// Each try is one bounded round trip; a lock another writer holds is
	// tried again after a pause, until the op's deadline.
	for pause := 5 * time.Millisecond; ; pause = min(2*pause, 100*time.Millisecond) {
		err := e.do(ctx, m.TryLock)
		if err == nil {
			break
		}
		if !errors.Is(err, concurrency.ErrLocked) {
			return nil, err
		}
		if err := sleep(ctx, pause); err != nil {
			return nil, fmt.Errorf("%s: another writer held the record's lock past the deadline (%v)", e.where(), e.timeout)
		}
	}
	return func() {
		uctx, cancel := context.WithTimeout(context.Background(), attemptTimeout)
		defer cancel()
		_ = m.Unlock(uctx) // if this fails, the lease lapses and frees it
	}, nil
}

// ensureSession grants the lease this handle's locks hang on, or a new one
// when the last lapsed.
func (e *Etcd) ensureSession(ctx context.Context) error {
	if e.sess != nil {
		select {
		case <-e.sess.Done():
			e.sess = nil
		default:
			return nil
		}
	}
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

// endSession stops the keep-alives and revokes the lease, briefly: a
// cluster that does not answer lets it lapse instead.
func (e *Etcd) endSession() {
	if e.sess == nil {
		return
	}
	e.sess.Orphan()
	ctx, cancel := context.WithTimeout(context.Background(), attemptTimeout)
	defer cancel()
	_, _ = e.cli.Revoke(ctx, e.sess.Lease())
	e.sess = nil
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
