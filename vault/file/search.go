package file

import (
	"fmt"
	"strings"
)

// find returns slot's sealed record. Indexed, it looks slot up. Unindexed
// (a one-shot get), it binary-searches the record lines, and since its
// answer is only right if they are in order, it checks the order it relies
// on: every line it reads must sort between the lines read before it on
// either side, a line found must sort between its neighbours, and a slot
// it does not find is proved absent by one pass over every line
// (proveAbsent). So a record that is there is never reported as not
// found. A hit is not proved unique: a second copy of the slot placed where
// the search does not look (an older sealing of the record, say) is not
// seen, and the copy found is served; that is the rollback of one record
// that whoever can write the file can always do (docs/threat-model.md),
// and list and check report the duplicate. Damage elsewhere (a record that
// fails to authenticate, say) is for list and check to find.
func (c *contents) find(slot string) (blob string, ok bool, err error) {
	if c.indexed {
		blob, ok = c.lookupIndexed(slot)
		return blob, ok, nil
	}
	lo, hi := 0, len(c.raw) // a run of whole lines
	var below, above string // the slots read nearest slot on either side
	for lo < hi {
		start := lo + strings.LastIndexByte(c.raw[lo:lo+(hi-lo)/2], '\n') + 1
		end := start + strings.IndexByte(c.raw[start:hi], '\n')
		s, b, ok := parseRecordLine(c.raw[start:end], end+1 == len(c.raw))
		switch {
		case !ok:
			return "", false, c.lineError(start, "malformed record line")
		case below != "" && s <= below, above != "" && s >= above:
			return "", false, c.lineError(start, errOrder)
		}
		switch strings.Compare(slot, s) {
		case 0:
			if err := c.between(start, end, s); err != nil {
				return "", false, err
			}
			return b, true, nil
		case -1:
			hi, above = start, s
		default:
			lo, below = end+1, s
		}
	}
	return "", false, c.proveAbsent(slot)
}

const errOrder = "record out of order or duplicated"

// between checks that the lines either side of the line at [start, end)
// are well formed and sort before and after its slot s.
func (c *contents) between(start, end int, s string) error {
	if start > 0 {
		prev := strings.LastIndexByte(c.raw[:start-1], '\n') + 1
		p, _, ok := parseRecordLine(c.raw[prev:start-1], false)
		if !ok {
			return c.lineError(prev, "malformed record line")
		}
		if p >= s {
			return c.lineError(start, errOrder)
		}
	}
	if next := end + 1; next < len(c.raw) {
		nend := next + strings.IndexByte(c.raw[next:], '\n')
		n, _, ok := parseRecordLine(c.raw[next:nend], nend+1 == len(c.raw))
		if !ok {
			return c.lineError(next, "malformed record line")
		}
		if n <= s {
			return c.lineError(next, errOrder)
		}
	}
	return nil
}

// proveAbsent checks, in one pass that reads only each line's slot, that
// the record lines are in strictly increasing order (so a binary search
// that missed slot was right to) and that none holds slot.
func (c *contents) proveAbsent(slot string) error {
	const head = 1 + slotHexSize + 3 // "slot":"
	prev := ""
	for off := 0; off < len(c.raw); {
		end := off + strings.IndexByte(c.raw[off:], '\n')
		line := c.raw[off:end]
		if len(line) <= head || line[0] != '"' || line[1+slotHexSize:head] != `":"` {
			return c.lineError(off, "malformed record line")
		}
		s := line[1 : 1+slotHexSize]
		if s <= prev || s == slot {
			return c.lineError(off, errOrder)
		}
		prev, off = s, end+1
	}
	return nil
}

// lineError names the file line that starts at offset off of the record
// lines (the header is line 1).
func (c *contents) lineError(off int, what string) error {
	return fmt.Errorf("line %d: %s", 2+strings.Count(c.raw[:off], "\n"), what)
}
