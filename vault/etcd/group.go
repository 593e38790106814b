package etcd

import (
	"context"
	"errors"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/arca-secrets/arca/vault"
)

// maxGroupWrites is the most records a group writes (maxLockSlots): its
// commit changes and counts each, and lets go of as many locks held from
// before, beside commitTxn's two operations, under etcd's default of 128
// operations in a transaction. A record written twice counts once.
const maxGroupWrites = maxLockSlots

// Group implements vault.Store. The group reads each record it writes
// under that record's lock and prepares each write against what the
// group's earlier writes left; it then commits every record in one
// transaction that holds only if the header and every record are as read.
// Reserve takes the locks of the records the group will write in one
// round trip (a raft write, unless this handle holds them all); without
// it, each record's lock is taken as its first write comes. A group of n
// writes is then one raft write for its commit, and one for its locks. A
// group waits for other writers only before its first write: a later
// write whose record another writer holds answers ErrCommitFirst.
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
	// reserved are the records Reserve read under their locks, by slot.
	reserved map[string]recordRead
}

// groupRec is one name the group writes: as read under its lock, and
// what the group's writes so far leave of it.
type groupRec struct {
	read   recordRead
	chain  vault.Chain // the name as the group's writes so far leave it
	stored []byte      // the key's new value
	// broken is why the value read fails to open, until a write of the
	// group removes it: only an unconditional Remove can.
	broken error
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
	if err := e.loadForWrite(ctx, w); err != nil {
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
		if rec.read.kv != nil {
			// The versions the name keeps go with its next value.
			cost += len(rec.read.kv.Value)
		}
		if len(g.recs) > 0 && g.bytes+cost > maxUnitBytes {
			return vault.Meta{}, vault.ErrCommitFirst
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

// read reads w's record under its lock: as Reserve read it, or with its
// lock taken now. Only a group with no write kept may wait for a lock
// (letting go of what it reserved first, so that it waits with nothing
// held); a later write whose lock another writer holds, or whose group
// lost its locks (its lease lapsed, or the header moved under it),
// answers ErrCommitFirst rather than wait with writes in hand: the
// group's commit then settles those.
func (g *group) read(ctx context.Context, w vault.Write) (groupRec, error) {
	e := g.e
	var r recordRead
	var err error
	reserved, ok := g.reserved[e.k.Slot(w.Name)]
	live := e.sessionLive()
	switch {
	case ok && e.hdrRev == g.hdrRev && live:
		r = reserved
	case len(g.recs) == 0:
		g.reserved = nil
		var recs []recordRead
		if recs, err = e.lockRecords(ctx, []string{w.Name}); err == nil {
			r = recs[0]
		}
		g.hdrRev = e.hdrRev
	case !live || e.hdrRev != g.hdrRev:
		err = vault.ErrCommitFirst
	default:
		r, ok, err = e.tryLockNow(ctx, w.Name)
		if (err == nil && !ok) || errors.Is(err, errLockLost) || (err != nil && e.sess == nil) {
			// Held by another writer, or the group's locks went (the
			// header moved, the lease went): the commit settles those.
			err = vault.ErrCommitFirst
		}
	}
	if err != nil {
		return groupRec{}, err
	}
	rec := groupRec{read: r}
	if r.kv != nil {
		rec.chain, rec.broken = e.openChain(e.k, r.slot, w.Name, r.kv)
	}
	return rec, nil
}

// Reserve implements vault.Reserver: the locks of the records names are
// written to, the first maxGroupWrites of them, taken in one round trip
// and the records read with them (reserveRecords). It waits only for the
// first name's record, held elsewhere; the others another writer holds
// are left to their writes, which take them without waiting as they come.
// A vault that is not there yet has no record to lock: the group's first
// write creates it, as ever.
func (g *group) Reserve(ctx context.Context, names []string) error {
	if g.ended || len(g.recs) > 0 || g.reserved != nil {
		return errors.New("a group's records are reserved once, before its first write")
	}
	e := g.e
	ctx, cancel := e.deadline(ctx)
	defer cancel()
	if e.k == nil {
		if err := e.loadHeader(ctx); errors.Is(err, errNoVault) {
			return nil
		} else if err != nil {
			return err
		}
	}
	names = firstSlots(e, names, maxGroupWrites)
	if len(names) == 0 {
		return nil
	}
	recs, err := e.reserveRecords(ctx, names)
	if err != nil {
		return err
	}
	g.hdrRev = e.hdrRev
	g.reserved = make(map[string]recordRead, len(recs))
	for _, r := range recs {
		g.reserved[r.slot] = r
	}
	return nil
}

// firstSlots is the names of the first n distinct slots of names.
func firstSlots(e *Vault, names []string, n int) []string {
	seen := make(map[string]bool, min(len(names), n))
	var kept []string
	for _, name := range names {
		s := e.k.Slot(name)
		if seen[s] {
			continue
		}
		if len(seen) == n {
			break
		}
		seen[s] = true
		kept = append(kept, name)
	}
	return kept
}

// prepare works out what w makes of rec (vault.Step), seals it and has
// approve see it; rec is changed only when approve returned nil.
func (g *group) prepare(rec *groupRec, w vault.Write, approve vault.Approve) (vault.Meta, error) {
	var next vault.Chain
	var m vault.Meta
	var stored []byte
	switch {
	case rec.broken != nil && (w.Kind != vault.Remove || w.IfVersion != nil):
		return vault.Meta{}, rec.broken
	case rec.broken != nil:
		var err error
		if next, m, stored, err = g.e.erasedUnread(rec.read.slot, w.Name, g.e.now()); err != nil {
			return vault.Meta{}, err
		}
	default:
		var err error
		if next, m, stored, err = g.e.stepChain(rec.read.slot, w, rec.chain, g.e.now()); err != nil {
			return vault.Meta{}, err
		}
	}
	if err := approve(m); err != nil {
		return vault.Meta{}, err
	}
	rec.chain, rec.stored, rec.broken = next, stored, nil
	return m, nil
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
	slots := make([]string, 0, len(g.recs))
	for _, r := range g.recs {
		cmps = append(cmps, r.read.unmoved(e))
		ops = append(ops, recordChange(e.recordKey(r.read.slot), r.stored))
		slots = append(slots, r.read.slot)
	}
	if err := e.commitLocked(ctx, cmps, ops, slots); err != nil {
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
	g.recs, g.bySlot, g.reserved = nil, nil, nil
	g.e.keepLock()
	g.e.mu.Unlock()
}
