package file

import (
	"encoding/hex"
	"slices"
)

// How a write's changes merge into the records as read: by slot, in one
// pass.

// hexSlot is the slot of ch as the file writes it, on the caller's stack
// when it does not escape.
func (ch *change) hexSlot() (h [slotHexSize]byte) {
	hex.Encode(h[:], ch.slot[:])
	return h
}

// changeSlot is the slot of ch as the file writes it.
func changeSlot(ch *change) string {
	h := ch.hexSlot()
	return string(h[:])
}

// entrySlot is the slot of a change given as an entry (contents.apply).
func entrySlot(e *entry) string { return e.slot }

// mergeSlots walks es and cs, both sorted by slot (slotOf gives a
// change's) and cs naming each slot at most once, in slot order: keep is
// called with each run of entries of es that no change names, change with
// every change, its slot, and the entry of es it replaces (nil: none).
// Where each change goes is searched for (sortsBefore), not found by
// comparing it with every entry before it: a few changes to a large vault
// cost a few searches, slotOf is called once per change, and the entries
// between two changes are handed on as they lie, uncompared.
func mergeSlots[C any](es []entry, cs []C, slotOf func(*C) string, keep func([]entry), change func(c *C, slot string, old *entry)) {
	for j := range cs {
		c := &cs[j]
		slot := slotOf(c)
		i := sortsBefore(es, slot)
		if i > 0 {
			keep(es[:i])
		}
		var old *entry
		if i < len(es) && es[i].slot == slot {
			old = &es[i]
			i++
		}
		change(c, slot, old)
		es = es[i:]
	}
	if len(es) > 0 {
		keep(es)
	}
}

// sortsBefore is how many entries of es, sorted by slot, sort before slot.
// It doubles its step from the front, then binary-searches the last step,
// so its cost grows with the logarithm of the answer rather than of
// len(es): a merge that walks many changes through es in order pays at
// most about two comparisons per entry, and a few changes far fewer.
func sortsBefore(es []entry, slot string) int {
	hi := 1
	for hi <= len(es) && es[hi-1].slot < slot {
		hi *= 2
	}
	// es[lo-1] sorts before slot (lo > 0), es[hi-1] does not (hi <= len(es)).
	lo, hi := hi/2, min(hi-1, len(es))
	i, _ := slices.BinarySearchFunc(es[lo:hi], slot, compareSlot)
	return lo + i
}

// apply makes changes to c's records and index: changes is sorted by slot,
// names each slot at most once, and gives it a new blob, or drops it when
// the blob is "". A change dropping a slot c does not hold does nothing.
func (c *contents) apply(changes []entry) {
	if len(changes) == 1 {
		c.set(changes[0].slot, changes[0].blob)
		return
	}
	out := make([]entry, 0, len(c.entries)+len(changes))
	keep := func(es []entry) { out = append(out, es...) }
	mergeSlots(c.entries, changes, entrySlot, keep, func(e *entry, _ string, _ *entry) {
		if e.blob != "" {
			out = append(out, entry{slot: e.slot, blob: e.blob})
		}
	})
	c.entries = out
	for _, ch := range changes {
		c.reindex(ch.slot, ch.blob, -1)
	}
}

// set gives slot the line blob, or drops it when blob is "".
func (c *contents) set(slot, blob string) {
	i, found := slices.BinarySearchFunc(c.entries, slot, compareSlot)
	switch {
	case blob == "" && found:
		c.entries = slices.Delete(c.entries, i, i+1)
	case blob == "":
		return
	case !found:
		c.entries = slices.Insert(c.entries, i, entry{slot: slot, blob: blob})
	default:
		c.entries[i] = entry{slot: slot, blob: blob} // no longer as read
	}
	c.reindex(slot, blob, i)
}

// reindex brings the prefix index up to date with entries after slot was
// given blob (dropped when ""); i is where slot is, or was, in entries
// (-1: find it).
func (c *contents) reindex(slot, blob string, i int) {
	p := slotPrefix(slot)
	if blob != "" {
		if e, ok := c.byPrefix[p]; !ok || e.slot == slot {
			c.byPrefix[p] = entry{slot: slot, blob: blob}
		}
		return
	}
	if c.byPrefix[p].slot != slot {
		return
	}
	delete(c.byPrefix, p)
	if i < 0 {
		i, _ = slices.BinarySearchFunc(c.entries, slot, compareSlot)
	}
	// Keep an entry for the prefix while a neighbour shares it.
	for _, j := range []int{i - 1, i} {
		if j >= 0 && j < len(c.entries) && slotPrefix(c.entries[j].slot) == p {
			c.byPrefix[p] = c.entries[j]
		}
	}
}
