package mcp

import (
	"unicode/utf8"

	"github.com/arca-secrets/arca/ops"
)

// cut returns res with at most about budget bytes of what grows without
// bound (an upstream's body, an action's output, the rows of a list or of
// changes), saying so in res's own fields as its schema has them: a cut
// body or output is truncated, a cut list is truncated with the rows left
// out counted in omitted. A cut changes cannot give a cursor for the rows
// it left out: it answers reset, so that the caller lists the env again,
// as after any reset.
func cut(res ops.Result, budget int) ops.Result {
	switch r := res.(type) {
	case *ops.HTTPResult:
		if len(r.Body) > budget {
			c := *r
			c.Body, c.Truncated = cutText(r.Body, budget), true
			return &c
		}
	case *ops.ExecResult:
		if len(r.Stdout)+len(r.Stderr) > budget {
			c := *r
			half := budget / 2
			if len(r.Stdout) > half {
				c.Stdout, c.Truncated.Stdout = cutText(r.Stdout, max(half, budget-len(r.Stderr))), true
			}
			if len(c.Stdout)+len(r.Stderr) > budget {
				c.Stderr, c.Truncated.Stderr = cutText(r.Stderr, budget-len(c.Stdout)), true
			}
			return &c
		}
	case ops.ListResult:
		if n := rowsWithin(len(r.Records), func(i int) int { return len(r.Records[i].Ref) }, budget); n < len(r.Records) {
			r.Omitted += len(r.Records) - n
			r.Records, r.Truncated = r.Records[:n], true
		}
		return r
	case ops.ChangesResult:
		if n := rowsWithin(len(r.Changes), func(i int) int { return len(r.Changes[i].Ref) }, budget); n < len(r.Changes) {
			r.Changes, r.Truncated, r.Reset = r.Changes[:n], true, true
		}
		return r
	}
	return res
}

// rowBytes is what a row of list or changes takes encoded beside its ref,
// at most: its version, its times and the names of its fields.
const rowBytes = 224

// rowsWithin is how many of the first of n rows fit in budget, row i
// taking its ref's length (refLen) and rowBytes.
func rowsWithin(n int, refLen func(i int) int, budget int) int {
	for i := range n {
		if budget -= refLen(i) + rowBytes; budget < 0 {
			return i
		}
	}
	return n
}

// cutText cuts b to at most n bytes, on a UTF-8 boundary: back at most
// to the start of the rune the cut falls in (bytes that are not UTF-8 are
// cut where they are, however many continuation bytes they hold).
func cutText(b []byte, n int) []byte {
	if n <= 0 {
		return b[:0:0]
	}
	if len(b) <= n {
		return b
	}
	for back := 0; back < utf8.UTFMax-1 && n > 0 && b[n]&0xC0 == 0x80; back++ {
		n--
	}
	return b[:n:n]
}
