package tmpl

import "bytes"

// cursor reads the rest of one action's line: b ends before the line's
// newline (or at the end of the template), i is the next byte.
type cursor struct {
	b []byte
	i int
}

// eol reports whether the line has no more bytes.
func (c *cursor) eol() bool { return c.i >= len(c.b) }

// at reports whether the bytes at the cursor start with s.
func (c *cursor) at(s string) bool { return bytes.HasPrefix(c.b[c.i:], []byte(s)) }

// skipWS skips spaces and tabs.
func (c *cursor) skipWS() {
	for c.i < len(c.b) && (c.b[c.i] == ' ' || c.b[c.i] == '\t') {
		c.i++
	}
}

// word reads the word at the cursor: the bytes up to a space, a tab, a
// "|", a "}}" or the end of the line. It is empty when one of those is at
// the cursor.
func (c *cursor) word() []byte {
	start := c.i
	for c.i < len(c.b) {
		switch b := c.b[c.i]; {
		case b == ' ' || b == '\t' || b == '|':
			return c.b[start:c.i]
		case b == '}' && c.i+1 < len(c.b) && c.b[c.i+1] == '}':
			return c.b[start:c.i]
		}
		c.i++
	}
	return c.b[start:c.i]
}
