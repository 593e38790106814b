package etcd

import (
	"context"
	"slices"
)

// reserveRecords takes, in one attempt, what it can of the locks of the
// records names are written to, and reads those records with them. The
// locks another writer holds are let go of at once: their writes take
// them as they come, without waiting (a group with writes in hand does not
// wait), or start the group after. Only the first name's lock is waited
// for, alone, as the group's first write would wait: a group never waits
// for a record a later write of it needs. It answers the records whose
// locks it holds. Callers hold e.mu and a loaded header.
func (e *Vault) reserveRecords(ctx context.Context, names []string) ([]recordRead, error) {
	return e.withLocks(ctx, names, func(slots []string) ([]recordRead, error) {
		t, err := e.tryLocks(ctx, slots)
		if err != nil {
			return nil, err
		}
		return e.settleReserve(ctx, slots, t)
	})
}

// settleReserve makes what the attempt t found of slots a reservation:
// when the first slot is free, the blocked ones are let go of; when it is
// not, everything else is, it waits for the first alone, and then takes
// what it can of the rest, once more without waiting.
func (e *Vault) settleReserve(ctx context.Context, slots []string, t lockTry) ([]recordRead, error) {
	if !slices.Contains(t.blocked, slots[0]) {
		e.releaseSlots(t.blocked)
		return heldOf(t.recs, t.blocked), nil
	}
	var others []string
	for s := range e.locks {
		if s != slots[0] {
			others = append(others, s)
		}
	}
	e.releaseSlots(others) // it waits with nothing else held
	if err := e.waitTurn(ctx, slots[:1], t.rev); err != nil {
		return nil, err
	}
	first, err := e.readLocked(ctx, slots[:1])
	if err != nil || len(slots) == 1 {
		return first, err
	}
	rest, err := e.tryLocks(ctx, slots[1:])
	if err != nil {
		return nil, err
	}
	e.releaseSlots(rest.blocked)
	return append(first, heldOf(rest.recs, rest.blocked)...), nil
}

// heldOf is recs less those of the slots in blocked.
func heldOf(recs []recordRead, blocked []string) []recordRead {
	return slices.DeleteFunc(recs, func(r recordRead) bool { return slices.Contains(blocked, r.slot) })
}
