package trail

import (
	"fmt"
	"io"
)

// Named is one trail of a merge: its name (the file it is read from, as
// the caller named it) and its lines.
type Named struct {
	Name string
	R    io.Reader
}

// Merged is one event of a merge: the trail it is in (its index in the
// trails given, and its name), the number of its line there (At, from 1),
// and the event with its line. Entry.Line is valid only during the call.
type Merged struct {
	Trail int
	Name  string
	At    int
	Entry
}

// Merge reads the events f picks from every trail at once and calls fn
// with each in time order: the one with the earliest ts first, the
// earlier trail first on a tie. Each trail is read in its own order, so a
// trail whose clock went back stays in the order it was written. It holds
// one event per trail, never a whole trail. A line that is not an event
// stops it with an error naming the trail and the line; so does an error
// of fn. Merge does not check chains: verify each trail first (Verify).
func Merge(trails []Named, f Filter, fn func(Merged) error) error {
	cs := make([]*cursor, len(trails))
	for i, t := range trails {
		cs[i] = &cursor{lr: newLineReader(t.R), f: f, m: Merged{Trail: i, Name: t.Name}}
		if err := cs[i].advance(); err != nil {
			return err
		}
	}
	for {
		var next *cursor
		for _, c := range cs {
			if c.has && (next == nil || c.m.TS.Before(next.m.TS)) {
				next = c
			}
		}
		if next == nil {
			return nil
		}
		if err := fn(next.m); err != nil {
			return err
		}
		if err := next.advance(); err != nil {
			return err
		}
	}
}

// cursor is where a merge is in one trail: the next event it picks.
type cursor struct {
	lr  *lineReader
	f   Filter
	n   int // the lines read
	m   Merged
	has bool // m holds an event not yet handed over
}

// advance reads up to the next event the filter picks; has is false at
// the trail's end.
func (c *cursor) advance() error {
	c.has = false
	for {
		line, err := c.lr.next()
		if err == io.EOF {
			return nil
		}
		c.n++
		if err != nil {
			return fmt.Errorf("%s: line %d: %v", c.m.Name, c.n, err)
		}
		err = pick(line, c.n, c.f, func(e Entry) error {
			e.Line = append(c.m.Entry.Line[:0], e.Line...) // the reader's buffer moves on
			c.m.Entry, c.m.At, c.has = e, c.n, true
			return nil
		})
		if err != nil {
			return fmt.Errorf("%s: %v", c.m.Name, err)
		}
		if c.has {
			return nil
		}
	}
}
