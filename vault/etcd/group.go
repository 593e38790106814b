package etcd

import (
	"context"
	"errors"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/arca-secrets/arca/vault"
)

// maxGroupWrites is the most writes a group holds: each puts or deletes
// its record and deletes its lock key, and commitTxn adds two operations,
// under etcd's default of 128 operations in a transaction's branch.
const maxGroupWrites = 60

// Group implements vault.Store. Each write takes its record's lock and
// reads the record (one round trip, as Apply does) and is prepared
// against what the group's earlier writes left; the group then commits
// every record and lets go of every lock in one transaction that holds
// only if the header and every record are as read. A group of n writes is
// n+1 raft writes where n single writes are 2n. A group holds at most
// maxGroupWrites writes and maxUnitBytes of records, and never waits on a
// lock another writer holds while it holds locks of its own: such a
// write answers vault.ErrCommitFirst, so two groups can never wait on
// each other.
func (e *Vault) Group(context.Context) (vault.Group, error) {
	e.mu.Lock()
	return &group{e: e, bySlot: map[string]int{}}, nil
}

type group struct {
	e      *Vault
	ended  bool
	recs   []groupRec
	bySlot map[string]int // index in recs
	bytes  int
}

// groupRec is one record the group writes: its lock, its mod revision
// when the lock was taken (0: absent), and what the group leaves in it.
type groupRec struct {
	l      *recordLock
	rev    int64
	next   vault.Record
	exists bool   // after the group's writes so far
	sealed []byte // nil: removed
}

var errGroupEnded = errors.New("the group of writes has ended")

// Add implements vault.Group.
func (g *group) Add(ctx context.Context, w vault.Write, approve vault.Approve) (vault.Meta, error) {
	if g.ended {
		return vault.Meta{}, errGroupEnded
	}
	e := g.e
	ctx, cancel := e.deadline(ctx)
	defer cancel()
	if err := e.loadForWrite(ctx, w.Kind); err != nil {
		return vault.Meta{}, err
	}
	cost := e.writeCost(w)
	if len(g.recs) > 0 && (len(g.recs) >= maxGroupWrites || g.bytes+cost > maxUnitBytes) {
		return vault.Meta{}, vault.ErrCommitFirst
	}
	slot := e.k.Slot(w.Name)
	j, known := g.bySlot[slot]
	var rec groupRec
	if known {
		rec = g.recs[j]
	} else {
		var err error
		if rec, err = g.lock(ctx, w); err != nil {
			return vault.Meta{}, err
		}
	}
	m, err := g.prepare(&rec, w, approve)
	if err != nil {
		if !known {
			e.unlock(rec.l)
		}
		return vault.Meta{}, err
	}
	g.bytes += cost
	if known {
		g.recs[j] = rec
	} else {
		g.bySlot[slot] = len(g.recs)
		g.recs = append(g.recs, rec)
	}
	return m, nil
}

// lock takes the lock of w's record and reads it: waiting for another
// writer only while the group holds no lock of its own.
func (g *group) lock(ctx context.Context, w vault.Write) (groupRec, error) {
	e := g.e
	var l *recordLock
	if len(g.recs) == 0 {
		var err error
		if l, err = e.lockRecord(ctx, w.Name); err != nil {
			return groupRec{}, err
		}
	} else {
		if err := e.ensureSession(ctx); err != nil {
			return groupRec{}, err
		}
		held, err := false, error(nil)
		if l, held, err = e.tryLock(ctx, w.Name); err != nil {
			return groupRec{}, err
		} else if !held {
			return groupRec{}, vault.ErrCommitFirst
		}
	}
	rec := groupRec{l: l, exists: l.kv != nil}
	if l.kv != nil {
		rec.rev = l.kv.ModRevision
		var err error
		if rec.next, err = e.open(l.slot, w.Name, l.kv); err != nil && w.Kind != vault.Remove {
			e.unlock(l)
			return groupRec{}, err
		}
	}
	return rec, nil
}

// prepare works out what w makes of rec, seals it and has approve see it;
// rec is changed only when approve returned nil.
func (g *group) prepare(rec *groupRec, w vault.Write, approve vault.Approve) (vault.Meta, error) {
	e := g.e
	next, err := vault.Next(w, rec.next, rec.exists, e.now().UTC())
	if err != nil {
		return vault.Meta{}, err
	}
	var sealed []byte
	if w.Kind != vault.Remove {
		if sealed, err = e.k.Seal(rec.l.slot, next); err != nil {
			return vault.Meta{}, err
		}
	}
	if err := approve(next.Meta); err != nil {
		return vault.Meta{}, err
	}
	kept := next
	kept.Created = false // what a later write of the record finds
	rec.next, rec.exists, rec.sealed = kept, w.Kind != vault.Remove, sealed
	if !rec.exists {
		rec.next = vault.Record{}
	}
	return next.Meta, nil
}

// Commit implements vault.Group: one transaction (commitTxn) that writes
// every record and deletes every lock key, if the header and every record
// are as read.
func (g *group) Commit(ctx context.Context) error {
	if g.ended {
		return errGroupEnded
	}
	defer g.end()
	if len(g.recs) == 0 {
		return nil
	}
	e := g.e
	ctx, cancel := e.deadline(ctx)
	defer cancel()
	cmps := make([]clientv3.Cmp, 0, len(g.recs))
	ops := make([]clientv3.Op, 0, 2*len(g.recs)+2) // room for commitTxn's two
	for _, r := range g.recs {
		key := e.recordKey(r.l.slot)
		cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(key), "=", r.rev))
		ops = append(ops, recordChange(key, r.sealed), clientv3.OpDelete(r.l.key))
	}
	if err := e.commitTxn(ctx, false, cmps, ops); err != nil {
		g.unlockAll()
		return fmt.Errorf("a group of %d writes: %w", len(g.recs), err)
	}
	g.recs = nil
	return nil
}

// Abort implements vault.Group.
func (g *group) Abort() {
	if g.ended {
		return
	}
	g.unlockAll()
	g.end()
}

func (g *group) unlockAll() {
	if g.e.sess == nil {
		return // ended: the locks lapse with its lease
	}
	for _, r := range g.recs {
		g.e.unlock(r.l)
	}
	g.recs = nil
}

func (g *group) end() {
	g.ended = true
	g.recs, g.bySlot = nil, nil
	g.e.mu.Unlock()
}
