package etcd

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/internal/seal"
)

// Get implements vault.Store: one round trip, made without holding e.mu,
// so that gets of one handle run at once (serve runs the reads in its
// input together). What it needs of the header in use (the keys, the
// header's mod revision, the record's key) is taken under e.mu; the read
// is guarded by that revision as every read is (see read), and a header
// that moved meanwhile is adopted under e.mu, unless the handle has
// already moved past it, before the get tries again.
func (e *Vault) Get(ctx context.Context, name string) (vault.Record, error) {
	ctx, cancel := e.deadline(ctx)
	defer cancel()
	for range 3 {
		g, err := e.snapshot(ctx, name)
		if errors.Is(err, errNoVault) {
			return vault.Record{}, vault.ErrNotFound
		}
		if err != nil {
			return vault.Record{}, err
		}
		if e.getSent != nil {
			e.getSent()
		}
		var resp *clientv3.TxnResponse
		err = e.do(ctx, func(ctx context.Context) error {
			var err error
			resp, err = e.cli.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(g.hdrKey), "=", g.rev)).
				Then(clientv3.OpGet(g.recKey)).Else(clientv3.OpGet(g.hdrKey)).Commit()
			return err
		})
		if err != nil {
			return vault.Record{}, err
		}
		kvs := resp.Responses[0].GetResponseRange().Kvs
		e.mu.Lock()
		if resp.Succeeded {
			var r vault.Record
			ok := false
			if len(kvs) > 0 {
				r, ok, err = e.openCurrent(g.k, g.slot, name, kvs[0])
			}
			e.mu.Unlock()
			if err == nil && !ok {
				err = vault.ErrNotFound
			}
			return r, err
		}
		err = e.adoptNewer(kvs)
		e.mu.Unlock()
		if errors.Is(err, errNoVault) {
			return vault.Record{}, vault.ErrNotFound
		}
		if err != nil {
			return vault.Record{}, err
		}
	}
	return vault.Record{}, fmt.Errorf("%s: the header keeps changing; try again", e.where())
}

// ReadsWait reports that a read makes a round trip to the cluster: reads
// of one handle are worth running at once (see ops.Service.ReadsWait).
func (e *Vault) ReadsWait() bool { return true }

// getRead is what a get takes of the header in use before its round trip.
type getRead struct {
	k              *seal.Keys
	rev            int64
	slot           string
	hdrKey, recKey string
}

// snapshot takes, under e.mu, what a get of name needs of the header in
// use, loading the header first when the handle has none.
func (e *Vault) snapshot(ctx context.Context, name string) (getRead, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.k == nil {
		if err := e.loadHeader(ctx); err != nil {
			return getRead{}, err
		}
	}
	slot := e.k.Slot(name)
	return getRead{k: e.k, rev: e.hdrRev, slot: slot, hdrKey: e.headerKey(), recKey: e.recordKey(slot)}, nil
}

// List implements vault.Store: the metadata of every name with a current
// record, read in pages at one revision (eachPage).
func (e *Vault) List(ctx context.Context) ([]vault.Meta, error) {
	e.lockForBulk()
	defer e.mu.Unlock()
	var metas []vault.Meta
	err := e.eachRecord(ctx, func() { metas = metas[:0] }, func(slot string, kv *mvccpb.KeyValue) error {
		r, ok, err := e.openCurrent(e.k, slot, "", kv)
		if ok {
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
	if err := e.loadForWrite(ctx, w); err != nil {
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
		if _, cur, ok := e.staleVersion(ctx, []vault.Write{w}, err); ok {
			return vault.Meta{}, &vault.ConflictError{Current: cur}
		}
		return vault.Meta{}, err
	}
	return m, nil
}

// prepare works out what w makes of the name r holds (step), and has
// approve see it: the metadata and the key's new value.
func (e *Vault) prepare(r recordRead, w vault.Write, approve vault.Approve) (vault.Meta, []byte, error) {
	_, m, stored, err := e.step(r.slot, w, r.kv, e.now())
	if err != nil {
		return vault.Meta{}, nil, err
	}
	if err := approve(m); err != nil {
		return vault.Meta{}, nil, err
	}
	return m, stored, nil
}

// step works out what w makes, at now, of the name stored in kv of slot
// (nil: the vault holds nothing of it): the chain it leaves, the metadata
// the write answers (vault.Step), and the key's new value, sealed. A value
// that fails to authenticate fails any write but an unconditional
// Remove, which erases it (erasedUnread). Callers hold e.mu.
func (e *Vault) step(slot string, w vault.Write, kv *mvccpb.KeyValue, now time.Time) (vault.Chain, vault.Meta, []byte, error) {
	var c vault.Chain
	if kv != nil {
		var err error
		if c, err = e.openChain(e.k, slot, w.Name, kv); err != nil {
			if w.Kind == vault.Remove && w.IfVersion == nil {
				return e.erasedUnread(slot, w.Name, now)
			}
			return vault.Chain{}, vault.Meta{}, nil, err
		}
	}
	return e.stepChain(slot, w, c, now)
}

// erasedUnread is what an rm makes of a name whose value fails to
// authenticate: a chain that holds nothing of it, not even a highest
// version (what it was cannot be told), so that changes reports the name
// erased. Callers hold e.mu.
func (e *Vault) erasedUnread(slot, name string, now time.Time) (vault.Chain, vault.Meta, []byte, error) {
	c := vault.Chain{Name: name, ChangedAt: now.UTC()}
	stored, err := e.sealChain(slot, c)
	if err != nil {
		return vault.Chain{}, vault.Meta{}, nil, err
	}
	return c, vault.Meta{Name: name, Touch: &vault.Touch{Gone: true}}, stored, nil
}

// stepChain is step from the chain c as the vault holds it.
func (e *Vault) stepChain(slot string, w vault.Write, c vault.Chain, now time.Time) (vault.Chain, vault.Meta, []byte, error) {
	next, m, err := vault.Step(w, c, e.history, now)
	if err != nil {
		return vault.Chain{}, vault.Meta{}, nil, err
	}
	stored, err := e.sealChain(slot, next)
	if err != nil {
		return vault.Chain{}, vault.Meta{}, nil, err
	}
	return next, m, stored, nil
}

// unmoved is the compare that holds while r's record is as read.
func (r recordRead) unmoved(e *Vault) clientv3.Cmp {
	var rev int64
	if r.kv != nil {
		rev = r.kv.ModRevision
	}
	return clientv3.Compare(clientv3.ModRevision(e.recordKey(r.slot)), "=", rev)
}

// loadForWrite loads the header for the write w, if none is loaded. A
// vault that is not there yet holds nothing of any name: w is worked out
// against that (vault.Step), and the vault is created only when w would
// write (a Put or Restore that is not refused); otherwise w's error
// (vault.ErrNotFound, a *vault.ConflictError) is the answer. Callers hold
// e.mu.
func (e *Vault) loadForWrite(ctx context.Context, w vault.Write) error {
	if e.k != nil {
		return e.upgradeHeader(ctx)
	}
	err := e.loadHeader(ctx)
	if errors.Is(err, errNoVault) {
		if _, _, err = vault.Step(w, vault.Chain{}, e.history, e.now()); err == nil {
			err = e.createOnWrite(ctx)
		}
	}
	if err != nil {
		return err
	}
	return e.upgradeHeader(ctx)
}

// upgradeHeader moves a vault of format 1 to format 2 before its first
// write: the same header with the new format, put if the header did not
// move (swapHeader), then loaded. One another handle moved first is
// loaded as it is. Callers hold e.mu and a loaded header.
func (e *Vault) upgradeHeader(ctx context.Context) error {
	if e.hdr.Format != etcdFormatV1 {
		return nil
	}
	rs, err := seal.ParseRecipients(e.hdr.Recipients)
	if err != nil {
		return fmt.Errorf("%s: %w", e.where(), err)
	}
	h, err := sealHeader(etcdFormat, e.k, rs, e.hdr.Chain)
	if err != nil {
		return err
	}
	if err := e.swapHeader(ctx, h, nil); err != nil && !errors.Is(err, errChanged) {
		return err
	}
	if err := e.loadHeader(ctx); err != nil {
		return err
	}
	if e.hdr.Format == etcdFormatV1 {
		return fmt.Errorf("%s: %w", e.where(), errChanged)
	}
	return nil
}

// errLeaseLapsed is a commit refused because the writer's lease lapsed
// between its read and its commit.
var errLeaseLapsed = errors.New("this writer's lease lapsed before its commit (the cluster was out of reach for a while); nothing was changed")

// errConflict is a write that lost a race with another writer.
var errConflict = errors.New("another write to this record, or a rekey, landed first; nothing was changed")

// recordChange puts a name's new value at key: a write never deletes a
// name's key (stored.go).
func recordChange(key string, stored []byte) clientv3.Op {
	return clientv3.OpPut(key, string(stored))
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
