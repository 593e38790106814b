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
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
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
	e.lockForBulk()
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

// Apply implements vault.Store: read the record under its lock (one round
// trip, which takes the lock unless this handle holds it), prepare the
// change, approve it, then commit it in one transaction that holds only if
// the header and the record are as read. The lock is kept for holdIdle, so
// a session's next write of the record is its commit alone.
func (e *Vault) Apply(ctx context.Context, w vault.Write, approve vault.Approve) (vault.Meta, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ctx, cancel := e.deadline(ctx)
	defer cancel()
	if err := e.loadForWrite(ctx, w.Kind); err != nil {
		return vault.Meta{}, err
	}
	recs, err := e.lockRecords(ctx, []string{w.Name})
	if err != nil {
		e.keepLock()
		return vault.Meta{}, err
	}
	r := recs[0]
	m, sealed, err := e.prepare(r, w, approve)
	if err != nil {
		e.keepLock()
		return vault.Meta{}, err
	}
	if err := e.commitLocked(ctx, []clientv3.Cmp{r.unmoved(e)}, []clientv3.Op{recordChange(e.recordKey(r.slot), sealed)}, []string{r.slot}); err != nil {
		return vault.Meta{}, err
	}
	return m, nil
}

// prepare works out what w makes of the record r holds, seals it and has
// approve see it: the metadata and the sealed record (nil: removed).
func (e *Vault) prepare(r recordRead, w vault.Write, approve vault.Approve) (vault.Meta, []byte, error) {
	cur, err := e.current(r, w)
	if err != nil {
		return vault.Meta{}, nil, err
	}
	next, sealed, err := e.change(r.slot, w, cur, r.kv != nil, approve)
	return next.Meta, sealed, err
}

// current opens the record r holds (the zero Record when none): one that
// cannot be opened fails any write but a Remove, which removes it anyway.
func (e *Vault) current(r recordRead, w vault.Write) (vault.Record, error) {
	if r.kv == nil {
		return vault.Record{}, nil
	}
	cur, err := e.open(r.slot, w.Name, r.kv)
	if err != nil && w.Kind != vault.Remove {
		return vault.Record{}, err
	}
	return cur, nil
}

// change works out what w makes of cur (exists: whether there is one) in
// slot, seals it and has approve see it: the record it leaves and its
// sealed form (nil: removed).
func (e *Vault) change(slot string, w vault.Write, cur vault.Record, exists bool, approve vault.Approve) (vault.Record, []byte, error) {
	next, err := vault.Next(w, cur, exists, e.now().UTC())
	if err != nil {
		return vault.Record{}, nil, err
	}
	var sealed []byte
	if w.Kind != vault.Remove {
		if sealed, err = e.k.Seal(slot, next); err != nil {
			return vault.Record{}, nil, err
		}
	}
	if err := approve(next.Meta); err != nil {
		return vault.Record{}, nil, err
	}
	return next, sealed, nil
}

// unmoved is the compare that holds while r's record is as read.
func (r recordRead) unmoved(e *Vault) clientv3.Cmp {
	var rev int64
	if r.kv != nil {
		rev = r.kv.ModRevision
	}
	return clientv3.Compare(clientv3.ModRevision(e.recordKey(r.slot)), "=", rev)
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

// errLeaseLapsed is a commit refused because the writer's lease lapsed
// between its read and its commit.
var errLeaseLapsed = errors.New("this writer's lease lapsed before its commit (the cluster was out of reach for a while); nothing was changed")

// errConflict is a write that lost a race with another writer.
var errConflict = errors.New("another write to this record, or a rekey, landed first; nothing was changed")

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
// since. It returns nil when the transaction landed (with its answer,
// nil when an earlier attempt's answer was lost and the token tells it
// landed), errConflict when a compare failed, and vault.ErrUnknownOutcome
// when nobody can tell (the session is then ended, so that what it holds
// lapses). bulk gives each attempt doBulk's time rather than do's.
// Callers hold e.mu and a session.
func (e *Vault) commitTxn(ctx context.Context, bulk bool, cmps []clientv3.Cmp, ops []clientv3.Op) (*clientv3.TxnResponse, error) {
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
		return resp, nil
	case err == nil && tries > 1 && tokenIs(resp.Responses[0].GetResponseRange().Kvs, token):
		return nil, nil // an earlier attempt landed; its answer was lost
	case err == nil:
		return nil, fmt.Errorf("%s: %w", e.where(), errConflict)
	case tries == 1 && errors.Is(err, rpctypes.ErrLeaseNotFound):
		// Refused whole: the token's lease is gone (it lapsed since the
		// read). Only a first attempt can say so: an earlier one may have
		// landed, and its token lapsed with the lease.
		e.endSession()
		return nil, fmt.Errorf("%s: %w", e.where(), errLeaseLapsed)
	}
	// No answer: ask the token, briefly, on a context of its own.
	if e.tokenLanded(tokKey, token) {
		return nil, nil
	}
	e.endSession() // let the lease, and any lock key it holds, lapse
	return nil, fmt.Errorf("%s: %w: %v", e.where(), vault.ErrUnknownOutcome, err)
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
