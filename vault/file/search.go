package file

import (
	"errors"
	"fmt"
	"strings"
)

// find returns the blob of slot's line. Indexed, it looks slot up. Unindexed
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
	blob, ok, err = search(memLines(c.raw), len(c.raw), slot)
	var bad *badLine
	switch {
	case errors.As(err, &bad):
		return "", false, c.lineError(bad.off, bad.what)
	case err != nil || ok:
		return blob, ok, err
	}
	return "", false, c.proveAbsent(slot)
}

const errOrder = "record out of order or duplicated"

// lineSource is record lines, n bytes, each ending in "\n": in memory
// (memLines) or read by pages from the file (pages).
type lineSource interface {
	// lineAt returns the line that holds byte at, lo <= at < hi, where lo
	// and hi are the starts of lines: its start, the offset of its "\n",
	// and the line without it.
	lineAt(lo, at, hi int) (start, end int, line string, err error)
}

// memLines is record lines in memory.
type memLines string

func (m memLines) lineAt(lo, at, hi int) (start, end int, line string, err error) {
	start = lo + strings.LastIndexByte(string(m[lo:at]), '\n') + 1
	end = start + strings.IndexByte(string(m[start:hi]), '\n')
	return start, end, string(m[start:end]), nil
}

// badLine is a record line that fails a check: the offset it starts at in
// the record lines, and what is wrong.
type badLine struct {
	off  int
	what string
}

func (e *badLine) Error() string { return e.what }

// search binary-searches the n bytes of record lines t for slot, checking
// every line it reads (see find). A miss is not proved here: ok is false.
func search(t lineSource, n int, slot string) (blob string, ok bool, err error) {
	lo, hi := 0, n          // a run of whole lines
	var below, above string // the slots read nearest slot on either side
	for lo < hi {
		start, end, line, err := t.lineAt(lo, lo+(hi-lo)/2, hi)
		if err != nil {
			return "", false, err
		}
		s, b, ok := parseRecordLine(line, end+1 == n)
		switch {
		case !ok:
			return "", false, &badLine{start, "malformed record line"}
		case below != "" && s <= below, above != "" && s >= above:
			return "", false, &badLine{start, errOrder}
		}
		switch strings.Compare(slot, s) {
		case 0:
			if err := neighbours(t, n, start, end, s); err != nil {
				return "", false, err
			}
			return b, true, nil
		case -1:
			hi, above = start, s
		default:
			lo, below = end+1, s
		}
	}
	return "", false, nil
}

// neighbours checks that the lines of t either side of the line at
// [start, end) are well formed and sort before and after its slot s.
func neighbours(t lineSource, n, start, end int, s string) error {
	if start > 0 {
		prev, _, line, err := t.lineAt(0, start-1, start)
		if err != nil {
			return err
		}
		p, _, ok := parseRecordLine(line, false)
		if !ok {
			return &badLine{prev, "malformed record line"}
		}
		if p >= s {
			return &badLine{start, errOrder}
		}
	}
	if next := end + 1; next < n {
		_, nend, line, err := t.lineAt(next, next, n)
		if err != nil {
			return err
		}
		x, _, ok := parseRecordLine(line, nend+1 == n)
		if !ok {
			return &badLine{next, "malformed record line"}
		}
		if x <= s {
			return &badLine{next, errOrder}
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
