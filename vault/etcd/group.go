package etcd

import (
	"context"
	"errors"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/arca-secrets/arca/vault"
)

// maxGroupWrites is the most writes a group holds: each puts or deletes
// its record and compares its mod revision, and commitLocked and
// commitTxn add four operations and two compares, under etcd's default of
// 128 of each in a transaction (a batch unit holds as many).
const maxGroupWrites = maxUnitWrites

// Group implements vault.Store. The group reads each record it writes
// under the vault's writer lock (one round trip; the first takes the lock
// unless this handle holds it) and prepares each write against what the
// group's earlier writes left; it then commits every record in one
// transaction that holds only if the header and every record are as
// read. A group of n writes is one raft write, or two when it took the
// lock. A group holds at most maxGroupWrites writes and maxUnitBytes of
// records; it waits for another writer's lock only before its first
// write, since it holds the lock from then on.
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
	hdrRev int64 // the header the group's writes were sealed under
}

// groupRec is one record the group writes: as read under the lock, and
// what the group leaves in it.
type groupRec struct {
	read   recordRead
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
		if rec, err = g.read(ctx, w); err != nil {
			return vault.Meta{}, err
		}
	}
	m, err := g.prepare(&rec, w, approve)
	if err != nil {
		return vault.Meta{}, err
	}
	g.bytes += cost
	if known {
		g.recs[j] = rec
	} else {
		g.bySlot[rec.read.slot] = len(g.recs)
		g.recs = append(g.recs, rec)
	}
	return m, nil
}

// read reads w's record under the writer lock. Only the group's first
// write may wait for the lock; a later one that finds it gone (lapsed, or
// the header moved under it) answers ErrCommitFirst rather than wait with
// writes in hand: the group's commit then settles those.
func (g *group) read(ctx context.Context, w vault.Write) (groupRec, error) {
	e := g.e
	var r recordRead
	var err error
	switch {
	case len(g.recs) == 0:
		r, err = e.lockedRead(ctx, w.Name)
		g.hdrRev = e.hdrRev
	case e.held == nil || e.hdrRev != g.hdrRev:
		err = vault.ErrCommitFirst
	default:
		var ok bool
		if r, ok, err = e.readHeld(ctx, w.Name); err == nil && !ok {
			err = vault.ErrCommitFirst // the lock went, or the header moved
		}
	}
	if err != nil {
		return groupRec{}, err
	}
	rec := groupRec{read: r, exists: r.kv != nil}
	if rec.next, err = e.current(r, w); err != nil {
		return groupRec{}, err
	}
	return rec, nil
}

// prepare works out what w makes of rec, seals it and has approve see it;
// rec is changed only when approve returned nil.
func (g *group) prepare(rec *groupRec, w vault.Write, approve vault.Approve) (vault.Meta, error) {
	next, sealed, err := g.e.change(rec.read.slot, w, rec.next, rec.exists, approve)
	if err != nil {
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

// Commit implements vault.Group: one transaction (commitLocked) that
// writes every record, if the header and every record are as read. A
// group whose handle adopted a new header since its first write (a rekey,
// new recipients: its records were sealed under the old one) commits
// nothing.
func (g *group) Commit(ctx context.Context) error {
	if g.ended {
		return errGroupEnded
	}
	defer g.end()
	if len(g.recs) == 0 {
		return nil
	}
	e := g.e
	if e.hdrRev != g.hdrRev {
		return fmt.Errorf("a group of %d writes: %s: %w", len(g.recs), e.where(), errConflict)
	}
	ctx, cancel := e.deadline(ctx)
	defer cancel()
	cmps := make([]clientv3.Cmp, 0, len(g.recs))
	ops := make([]clientv3.Op, 0, len(g.recs))
	for _, r := range g.recs {
		cmps = append(cmps, r.read.unmoved(e))
		ops = append(ops, recordChange(e.recordKey(r.read.slot), r.sealed))
	}
	if err := e.commitLocked(ctx, cmps, ops); err != nil {
		return fmt.Errorf("a group of %d writes: %w", len(g.recs), err)
	}
	return nil
}

// Abort implements vault.Group: nothing is written.
func (g *group) Abort() {
	if !g.ended {
		g.end()
	}
}

// end ends the group and lets go of the handle; a lock still held is
// kept as after any write (keepLock).
func (g *group) end() {
	g.ended = true
	g.recs, g.bySlot = nil, nil
	g.e.keepLock()
	g.e.mu.Unlock()
}
