package client

import "time"

// dec is the fast path's reader of one response line (see fast.go). It
// takes the JSON that serve writes and turns down, by setting no, whatever
// it would have to guess at: an escape or a byte over 0x7f in a key, a
// null, a number or time not in serve's own form, nesting past maxDepth.
// A line turned down goes to encoding/json, so the fast path only ever has
// to be right about what it takes, never complete.
type dec struct {
	b  []byte
	i  int
	no bool // not a shape the fast path takes: fall back

	lastTime []byte // the last time read, and what it read as
	last     time.Time
	ref, env string // what the result most likely holds (see sent)
}

// maxDepth is how deep a skipped value may nest before the fast path gives
// the line to encoding/json (serve's ids nest at most 31 levels).
const maxDepth = 64

// fail turns the line down and moves to its end, so every loop stops.
func (d *dec) fail() { d.no, d.i = true, len(d.b) }

// ws skips JSON whitespace.
func (d *dec) ws() {
	i := d.i
	for i < len(d.b) && (d.b[i] == ' ' || d.b[i] == '\t' || d.b[i] == '\n' || d.b[i] == '\r') {
		i++
	}
	d.i = i
}

// peek is the next byte after whitespace, 0 at the end.
func (d *dec) peek() byte {
	d.ws()
	if d.i < len(d.b) {
		return d.b[d.i]
	}
	return 0
}

// eat consumes c when it comes next.
func (d *dec) eat(c byte) bool {
	if d.peek() == c {
		d.i++
		return true
	}
	return false
}

func (d *dec) must(c byte) {
	if !d.eat(c) {
		d.fail()
	}
}

// more is the end of one member of an object or array: true after a comma,
// false after the closing byte.
func (d *dec) more(closing byte) bool {
	if d.eat(',') {
		return true
	}
	d.must(closing)
	return false
}

// key reads an object key and its colon. A key with an escape or a byte
// over 0x7f is turned down: encoding/json unescapes keys and folds their
// case with Unicode's rules, which the fast path does not repeat.
func (d *dec) key() []byte {
	k, esc, high := d.str()
	if esc || high {
		d.fail()
	}
	d.must(':')
	return k
}

// plainKey reads the key quoted (with its quotes and colon) when it comes
// next as serve writes it, with no space: what key would read, quicker.
func (d *dec) plainKey(quoted string) bool {
	if len(d.b)-d.i >= len(quoted) && string(d.b[d.i:d.i+len(quoted)]) == quoted {
		d.i += len(quoted)
		return true
	}
	return false
}

// uint reads a non-negative integer that fits a uint64; a fraction, an
// exponent or a sign is turned down (encoding/json refuses them for a
// uint64 field).
func (d *dec) uint() uint64 {
	d.ws()
	start := d.i
	var n uint64
	for d.i < len(d.b) && '0' <= d.b[d.i] && d.b[d.i] <= '9' {
		c := uint64(d.b[d.i] - '0')
		if n > (1<<64-1-c)/10 {
			d.fail()
			return 0
		}
		n = n*10 + c
		d.i++
	}
	if d.i == start || d.b[start] == '0' && d.i-start > 1 {
		d.fail()
		return 0
	}
	if d.i < len(d.b) && (d.b[d.i] == '.' || d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		d.fail()
	}
	return n
}

// bool reads true or false; anything else, null too, is turned down.
func (d *dec) bool() bool {
	switch {
	case d.lit("true"):
		return true
	case d.lit("false"):
		return false
	}
	d.fail()
	return false
}

// lit consumes the literal word when it comes next.
func (d *dec) lit(word string) bool {
	d.ws()
	if len(d.b)-d.i >= len(word) && string(d.b[d.i:d.i+len(word)]) == word {
		d.i += len(word)
		return true
	}
	return false
}

// skip checks and passes over any value: an unknown field's.
func (d *dec) skip(depth int) {
	if depth > maxDepth {
		d.fail()
		return
	}
	switch d.peek() {
	case '"':
		d.str()
	case '{':
		d.i++
		for more := !d.eat('}'); more && !d.no; more = d.more('}') {
			d.str()
			d.must(':')
			d.skip(depth + 1)
		}
	case '[':
		d.i++
		for more := !d.eat(']'); more && !d.no; more = d.more(']') {
			d.skip(depth + 1)
		}
	case 't', 'f', 'n':
		if !d.lit("true") && !d.lit("false") && !d.lit("null") {
			d.fail()
		}
	default:
		d.number()
	}
}

// number passes over a number of JSON's grammar.
func (d *dec) number() {
	b, i := d.b, d.i
	digits := func() bool {
		n := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		return i > n
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case !digits():
		d.fail()
		return
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			d.fail()
			return
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			d.fail()
			return
		}
	}
	d.i = i
}

// foldsTo reports whether key, all ASCII, matches one of names when case
// is ignored: encoding/json would take it for that field, so the fast path
// does not skip it.
func foldsTo(key []byte, names []string) bool {
	for _, n := range names {
		if len(n) == len(key) && asciiFold(key, n) {
			return true
		}
	}
	return false
}

func asciiFold(a []byte, b string) bool {
	for i := range a {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// unknown passes over the value of a key the fast path does not know, an
// added field, unless encoding/json would read it as a known one.
func (d *dec) unknown(key []byte, names []string) {
	if foldsTo(key, names) {
		d.fail()
		return
	}
	d.skip(1)
}

// once marks a key seen and turns down a key given twice (encoding/json
// would decode both into the same field).
func (d *dec) once(seen *uint32, bit uint32) {
	if *seen&bit != 0 {
		d.fail()
	}
	*seen |= bit
}
