package vault

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// open decrypts one stored record of slot; name, when not "", is the name
// it must carry.
func (e *Etcd) open(slot, name string, kv *mvccpb.KeyValue) (Record, error) {
	var err error
	var r Record
	if len(kv.Value) > maxEtcdRecord {
		err = fmt.Errorf("larger than %d bytes", maxEtcdRecord)
	} else {
		r, err = e.k.open(slot, bytes.Clone(kv.Value))
	}
	if err == nil && name != "" && r.Name != name {
		err = errAuth
	}
	if err != nil {
		return Record{}, fmt.Errorf("%s: record %s: %w", e.where(), slot, err)
	}
	return r, nil
}

// Get implements Store: one round trip.
func (e *Etcd) Get(ctx context.Context, name string) (Record, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ctx, cancel := e.deadline(ctx)
	defer cancel()
	var slot string
	resp, err := e.read(ctx, false, func() []clientv3.Op {
		slot = e.k.slot(name)
		return []clientv3.Op{clientv3.OpGet(e.recordKey(slot))}
	})
	if errors.Is(err, errNoVault) {
		return Record{}, ErrNotFound
	}
	if err != nil {
		return Record{}, err
	}
	kvs := resp.Responses[0].GetResponseRange().Kvs
	if len(kvs) == 0 {
		return Record{}, ErrNotFound
	}
	return e.open(slot, name, kvs[0])
}

// List implements Store.
func (e *Etcd) List(ctx context.Context) ([]Meta, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ctx, cancel := e.deadline(ctx)
	defer cancel()
	kvs, err := e.records(ctx)
	if errors.Is(err, errNoVault) {
		return []Meta{}, nil
	}
	if err != nil {
		return nil, err
	}
	metas := make([]Meta, 0, len(kvs))
	for _, kv := range kvs {
		r, err := e.open(e.slotOf(kv), "", kv)
		if err != nil {
			return nil, err
		}
		metas = append(metas, r.Meta)
	}
	return sortByName(metas), nil
}

// records reads every record under the header in use. Callers hold e.mu.
func (e *Etcd) records(ctx context.Context) ([]*mvccpb.KeyValue, error) {
	resp, err := e.read(ctx, true, func() []clientv3.Op {
		return []clientv3.Op{clientv3.OpGet(e.recordsKey(), clientv3.WithPrefix())}
	})
	if err != nil {
		return nil, err
	}
	return resp.Responses[0].GetResponseRange().Kvs, nil
}

func (e *Etcd) slotOf(kv *mvccpb.KeyValue) string {
	return strings.TrimPrefix(string(kv.Key), e.recordsKey())
}

// Apply implements Store: lock the record and read it (one round trip),
// prepare the change, approve it, then commit it and let go of the lock in
// one transaction that holds only if neither the header nor the record
// moved since the read (which matters only if the lock lapsed).
func (e *Etcd) Apply(ctx context.Context, w Write, approve Approve) (Meta, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ctx, cancel := e.deadline(ctx)
	defer cancel()
	if e.k == nil {
		err := e.loadHeader(ctx)
		switch {
		case errors.Is(err, errNoVault) && w.Kind == Put:
			err = e.createOnWrite(ctx)
		case errors.Is(err, errNoVault):
			err = ErrNotFound // rotate, rm: no vault holds no record
		}
		if err != nil {
			return Meta{}, err
		}
	}
	l, err := e.lockRecord(ctx, w.Name)
	if err != nil {
		return Meta{}, err
	}
	committed := false
	defer func() {
		if !committed {
			e.unlock(l)
		}
	}()
	var cur Record
	var rev int64
	if l.kv != nil {
		rev = l.kv.ModRevision
		cur, err = e.open(l.slot, w.Name, l.kv)
		if err != nil && w.Kind != Remove {
			return Meta{}, err
		}
	}
	next, err := nextRecord(w, cur, l.kv != nil, e.now().UTC())
	if err != nil {
		return Meta{}, err
	}
	var sealed []byte
	if w.Kind != Remove {
		if sealed, err = e.k.seal(l.slot, next); err != nil {
			return Meta{}, err
		}
	}
	if err := approve(next.Meta); err != nil {
		return Meta{}, err
	}
	if err := e.commit(ctx, l, rev, sealed); err != nil {
		return Meta{}, err
	}
	committed = true
	return next.Meta, nil
}

// errConflict is a write that lost a race with another writer.
var errConflict = errors.New("another write to this record, or a rekey, landed first; nothing was changed")

// ErrUnknownOutcome is a change whose commit was sent but whose answer
// never came: it may or may not have landed.
var ErrUnknownOutcome = errors.New("the cluster did not confirm the change; it may have landed (read it back)")

// commit writes sealed to l's record (deletes it when sealed is nil) and
// deletes l's lock key, if the header and the record are as read (the
// record at mod revision rev, 0: absent). The same transaction puts a
// fresh random token in this handle's token key: when an attempt's answer
// is lost, the token tells whether it landed, whatever others wrote since.
func (e *Etcd) commit(ctx context.Context, l *recordLock, rev int64, sealed []byte) error {
	key := e.recordKey(l.slot)
	change := clientv3.OpDelete(key)
	if sealed != nil {
		change = clientv3.OpPut(key, string(sealed))
	}
	token := newToken()
	tokKey := fmt.Sprintf("%stoken/%x", e.prefix, e.sess.Lease())
	var resp *clientv3.TxnResponse
	var tries int
	err := e.do(ctx, func(ctx context.Context) error {
		tries++
		var err error
		resp, err = e.cli.Txn(ctx).
			If(e.headerUnchanged(), clientv3.Compare(clientv3.ModRevision(key), "=", rev)).
			Then(change, clientv3.OpPut(e.writtenKey(), ""), clientv3.OpDelete(l.key), clientv3.OpPut(tokKey, token, clientv3.WithLease(e.sess.Lease()))).
			Else(clientv3.OpGet(tokKey)).Commit()
		return err
	})
	switch {
	case err == nil && resp.Succeeded:
		return nil
	case err == nil && tries > 1 && tokenIs(resp.Responses[0].GetResponseRange().Kvs, token):
		e.unlock(l)
		return nil
	case err == nil:
		return fmt.Errorf("%s: %w", e.where(), errConflict)
	}
	// No answer: ask the token, briefly, on a context of its own.
	if e.tokenLanded(tokKey, token) {
		return nil
	}
	e.endSession() // let the lease, and any lock key it holds, lapse
	return fmt.Errorf("%s: %w: %v", e.where(), ErrUnknownOutcome, err)
}

// tokenLanded reports whether tokKey holds token; false when unknown.
func (e *Etcd) tokenLanded(tokKey, token string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), attemptTimeout)
	defer cancel()
	resp, err := e.cli.Get(ctx, tokKey)
	return err == nil && tokenIs(resp.Kvs, token)
}

func tokenIs(kvs []*mvccpb.KeyValue, token string) bool {
	return len(kvs) == 1 && string(kvs[0].Value) == token
}

// newToken is 16 random bytes in hex.
func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
