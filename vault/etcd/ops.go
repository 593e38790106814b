package etcd

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/internal/seal"
)

// open decrypts one stored record of slot; name, when not "", is the name
// it must carry.
func (e *Vault) open(slot, name string, kv *mvccpb.KeyValue) (vault.Record, error) {
	var err error
	var r vault.Record
	if len(kv.Value) > maxEtcdRecord {
		err = fmt.Errorf("larger than %d bytes", maxEtcdRecord)
	} else {
		r, err = e.k.Open(slot, bytes.Clone(kv.Value))
	}
	if err == nil && name != "" && r.Name != name {
		err = seal.ErrAuth
	}
	if err != nil {
		return vault.Record{}, fmt.Errorf("%s: record %s: %w", e.where(), slot, err)
	}
	return r, nil
}

// Get implements vault.Store: one round trip.
func (e *Vault) Get(ctx context.Context, name string) (vault.Record, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ctx, cancel := e.deadline(ctx)
	defer cancel()
	var slot string
	resp, err := e.read(ctx, false, func() []clientv3.Op {
		slot = e.k.Slot(name)
		return []clientv3.Op{clientv3.OpGet(e.recordKey(slot))}
	})
	if errors.Is(err, errNoVault) {
		return vault.Record{}, vault.ErrNotFound
	}
	if err != nil {
		return vault.Record{}, err
	}
	kvs := resp.Responses[0].GetResponseRange().Kvs
	if len(kvs) == 0 {
		return vault.Record{}, vault.ErrNotFound
	}
	return e.open(slot, name, kvs[0])
}

// List implements vault.Store: every record's metadata, read in pages at
// one revision (eachPage).
func (e *Vault) List(ctx context.Context) ([]vault.Meta, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var metas []vault.Meta
	err := e.eachRecord(ctx, func() { metas = metas[:0] }, func(slot string, kv *mvccpb.KeyValue) error {
		r, err := e.open(slot, "", kv)
		if err == nil {
			metas = append(metas, r.Meta)
		}
		return err
	})
	if errors.Is(err, errNoVault) {
		return []vault.Meta{}, nil
	}
	if err != nil {
		return nil, err
	}
	if metas == nil {
		metas = []vault.Meta{}
	}
	return vault.SortByName(metas), nil
}

func (e *Vault) slotOf(kv *mvccpb.KeyValue) string {
	return strings.TrimPrefix(string(kv.Key), e.recordsKey())
}

// Apply implements vault.Store: lock the record and read it (one round trip),
// prepare the change, approve it, then commit it and let go of the lock in
// one transaction that holds only if neither the header nor the record
// moved since the read (which matters only if the lock lapsed).
func (e *Vault) Apply(ctx context.Context, w vault.Write, approve vault.Approve) (vault.Meta, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ctx, cancel := e.deadline(ctx)
	defer cancel()
	if err := e.loadForWrite(ctx, w.Kind); err != nil {
		return vault.Meta{}, err
	}
	l, err := e.lockRecord(ctx, w.Name)
	if err != nil {
		return vault.Meta{}, err
	}
	committed := false
	defer func() {
		if !committed {
			e.unlock(l)
		}
	}()
	var cur vault.Record
	var rev int64
	if l.kv != nil {
		rev = l.kv.ModRevision
		cur, err = e.open(l.slot, w.Name, l.kv)
		if err != nil && w.Kind != vault.Remove {
			return vault.Meta{}, err
		}
	}
	next, err := vault.Next(w, cur, l.kv != nil, e.now().UTC())
	if err != nil {
		return vault.Meta{}, err
	}
	var sealed []byte
	if w.Kind != vault.Remove {
		if sealed, err = e.k.Seal(l.slot, next); err != nil {
			return vault.Meta{}, err
		}
	}
	if err := approve(next.Meta); err != nil {
		return vault.Meta{}, err
	}
	if err := e.commit(ctx, l, rev, sealed); err != nil {
		return vault.Meta{}, err
	}
	committed = true
	return next.Meta, nil
}

// loadForWrite loads the header for a write of kind k, if none is loaded.
// A vault that is not there yet is created when k would create a record
// (Put, Restore); for any other kind it is vault.ErrNotFound, since no
// vault holds no record. Callers hold e.mu.
func (e *Vault) loadForWrite(ctx context.Context, k vault.Kind) error {
	if e.k != nil {
		return nil
	}
	err := e.loadHeader(ctx)
	switch {
	case errors.Is(err, errNoVault) && (k == vault.Put || k == vault.Restore):
		err = e.createOnWrite(ctx)
	case errors.Is(err, errNoVault):
		err = vault.ErrNotFound
	}
	return err
}

// errConflict is a write that lost a race with another writer.
var errConflict = errors.New("another write to this record, or a rekey, landed first; nothing was changed")

// commit writes sealed to l's record (deletes it when sealed is nil) and
// deletes l's lock key, if the header and the record are as read (the
// record at mod revision rev, 0: absent), in one transaction (commitTxn).
func (e *Vault) commit(ctx context.Context, l *recordLock, rev int64, sealed []byte) error {
	key := e.recordKey(l.slot)
	return e.commitTxn(ctx, false,
		[]clientv3.Cmp{clientv3.Compare(clientv3.ModRevision(key), "=", rev)},
		[]clientv3.Op{recordChange(key, sealed), clientv3.OpDelete(l.key)})
}

// recordChange puts sealed at key, or deletes key when sealed is nil.
func recordChange(key string, sealed []byte) clientv3.Op {
	if sealed == nil {
		return clientv3.OpDelete(key)
	}
	return clientv3.OpPut(key, string(sealed))
}

// commitTxn runs ops in one transaction if the header is as loaded and
// cmps hold; the same transaction touches the written marker (so a rekey
// that read before it fails) and puts a fresh random token in this
// handle's token key, bound to its session's lease: when an attempt's
// answer is lost, the token tells whether it landed, whatever others wrote
// since. It returns nil when the transaction landed, errConflict when a
// compare failed, and vault.ErrUnknownOutcome when nobody can tell (the
// session is then ended, so that what it holds lapses). bulk gives each
// attempt doBulk's time rather than do's. Callers hold e.mu and a session.
func (e *Vault) commitTxn(ctx context.Context, bulk bool, cmps []clientv3.Cmp, ops []clientv3.Op) error {
	token := newToken()
	lease := e.sess.Lease()
	tokKey := fmt.Sprintf("%stoken/%x", e.prefix, lease)
	ifs := append([]clientv3.Cmp{e.headerUnchanged()}, cmps...)
	then := append(slices.Clip(ops), clientv3.OpPut(e.writtenKey(), ""), clientv3.OpPut(tokKey, token, clientv3.WithLease(lease)))
	try := e.do
	if bulk {
		try = e.doBulk
	}
	var resp *clientv3.TxnResponse
	var tries int
	err := try(ctx, func(ctx context.Context) error {
		tries++
		var err error
		resp, err = e.cli.Txn(ctx).If(ifs...).Then(then...).Else(clientv3.OpGet(tokKey)).Commit()
		return err
	})
	switch {
	case err == nil && resp.Succeeded:
		return nil
	case err == nil && tries > 1 && tokenIs(resp.Responses[0].GetResponseRange().Kvs, token):
		return nil // an earlier attempt landed; its answer was lost
	case err == nil:
		return fmt.Errorf("%s: %w", e.where(), errConflict)
	}
	// No answer: ask the token, briefly, on a context of its own.
	if e.tokenLanded(tokKey, token) {
		return nil
	}
	e.endSession() // let the lease, and any lock key it holds, lapse
	return fmt.Errorf("%s: %w: %v", e.where(), vault.ErrUnknownOutcome, err)
}

// tokenLanded reports whether tokKey holds token; false when unknown.
func (e *Vault) tokenLanded(tokKey, token string) bool {
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
