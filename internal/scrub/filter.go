package scrub

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"slices"
)

// A matcher finds every occurrence of a fixed set of forms in a text. It
// is built once for a Set's forms and never changed: streams share it.
//
// The forms are split in two tiers, those of longTier bytes or more and
// the shorter ones, so that a few short forms do not slow the search for
// the many long ones. A tier reads a gram of q bytes at every stride-th
// position of the text only: 8 bytes in the long tier, 4 in the short, or
// 2 when a short form is under 8 bytes. Each of its forms is at least m
// bytes long, and stride = m-q+1, so an occurrence of a form that starts
// at p holds a read position j with p <= j < p+stride whose gram lies
// inside it: the form's gram at offset j-p. The grams of every form at
// offsets 0 to stride-1 are in a bitset (one hashed bit each; a 2-byte
// gram is its own bit), which almost every read position fails; one that
// passes is looked up in a table of those grams, each naming its form and
// offset, and the form is compared there.
//
// Two more bitsets tell a Stream which bytes at the end of a text could
// begin an occurrence that only more text can decide (see hold): one bit
// for each form's first 8 bytes, and one for each of its first 1 to 7
// bytes, hashed with their length.
type matcher struct {
	forms []form
	look  int // bytes an occurrence needs in view to be decided
	tiers []tier

	first8   []uint64 // the forms' first 8 bytes (forms of 8 bytes or more)
	first8sh uint
	firstK   []uint64 // the forms' first k bytes, k = 1 to 7 (and under its length)
	firstKsh uint
}

// form is one form of one value.
type form struct {
	b        []byte
	value    int  // the value's index in its Set
	boundary bool // shorter than Anywhere: needs neighbours that are not letters or digits
}

// tier is the tables of some of a matcher's forms.
type tier struct {
	q       int // the gram's length: 2, 4 or 8 bytes
	stride  int // positions between two reads
	bitset  []uint64
	bitsh   uint     // a hash's top bits index the bitset: h >> bitsh
	bucksh  uint     // and the buckets: h >> bucksh
	heads   []uint32 // bucket b's entries are entries[heads[b]:heads[b+1]]
	entries []entry
}

type entry struct {
	gram uint64
	form uint32 // index into the matcher's forms
	off  uint32 // the gram's offset in the form
}

// match is an occurrence of a form: text[start:end], of value.
type match struct {
	start, end, value int
}

const (
	hashMul   = 0x9e3779b97f4a7c15
	longTier  = 16 // forms this long or longer are read 8 bytes at a time
	maxStride = 32 // more grams per form would cost more table than it saves reads
)

// newMatcher builds the matcher of forms, which are distinct and none
// shorter than MinLen; with no forms it matches nothing.
func newMatcher(forms []form) *matcher {
	m := &matcher{forms: forms}
	var long, short []uint32
	shortest := longTier
	for i, f := range forms {
		m.look = max(m.look, len(f.b))
		if f.boundary {
			m.look = max(m.look, len(f.b)+1)
		}
		if len(f.b) >= longTier {
			long = append(long, uint32(i))
		} else {
			short = append(short, uint32(i))
			shortest = min(shortest, len(f.b))
		}
	}
	if len(long) > 0 {
		m.tiers = append(m.tiers, newTier(forms, long, 8))
	}
	if len(short) > 0 {
		q := 4
		if shortest < 8 { // a read every 4th position or more often
			q = 2
		}
		m.tiers = append(m.tiers, newTier(forms, short, q))
	}
	m.first8, m.first8sh = newBitset(len(forms))
	m.firstK, m.firstKsh = newBitset(len(forms) * 7)
	for _, f := range forms {
		if len(f.b) >= 8 {
			setBit(m.first8, m.first8sh, binary.LittleEndian.Uint64(f.b))
		}
		for k := 1; k < 8 && k <= len(f.b); k++ {
			setBit(m.firstK, m.firstKsh, prefixKey(f.b[:k]))
		}
	}
	return m
}

// newBitset returns a bitset of about 16 bits for each of n keys, at
// least 4,096, and the shift that takes a hash to a bit.
func newBitset(n int) ([]uint64, uint) {
	lg := max(bits.Len(uint(n))+4, 12)
	return make([]uint64, 1<<(lg-6)), uint(64 - lg)
}

func setBit(set []uint64, sh uint, key uint64) {
	h := mix(key) >> sh
	set[h>>6] |= 1 << (h & 63)
}

func hasBit(set []uint64, sh uint, key uint64) bool {
	h := mix(key) >> sh
	return set[h>>6]&(1<<(h&63)) != 0
}

// mix is splitmix64's finalizer: every bit of k moves the top bits.
func mix(k uint64) uint64 {
	k = (k ^ k>>30) * 0xbf58476d1ce4e5b9
	k = (k ^ k>>27) * 0x94d049bb133111eb
	return k ^ k>>31
}

// prefixKey is the key of b, 1 to 7 bytes, in firstK: its bytes, little
// endian, and its length.
func prefixKey(b []byte) uint64 {
	var g uint64
	for i := len(b) - 1; i >= 0; i-- {
		g = g<<8 | uint64(b[i])
	}
	return g ^ uint64(len(b))<<56
}

// hold returns where the bytes of text start that more text could make
// part of an occurrence not yet decided: the first position p where
// text[p:] is a proper prefix of a form, or is a form under Anywhere
// bytes (whose right neighbour is still to come); len(text) if there is
// none. It may answer earlier than that (a hash collision says "maybe"),
// never later. An occurrence that starts before len(text)-look+1 fits in
// text, so only the positions from there are looked at.
func (m *matcher) hold(text []byte) int {
	n := len(text)
	if len(m.forms) == 0 {
		return n
	}
	p := max(n-m.look+1, 0)
	for ; p+8 <= n; p++ {
		if hasBit(m.first8, m.first8sh, binary.LittleEndian.Uint64(text[p:])) && m.begins(text[p:]) {
			return p
		}
	}
	for ; p < n; p++ { // under 8 bytes: the bit is the answer
		if hasBit(m.firstK, m.firstKsh, prefixKey(text[p:])) {
			return p
		}
	}
	return n
}

// begins reports whether t, 8 bytes or more, is a proper prefix of a
// form: the forms whose first gram in their tier is t's are compared.
func (m *matcher) begins(t []byte) bool {
	for i := range m.tiers {
		tr := &m.tiers[i]
		g := tr.gram(t, 0)
		b := g * hashMul >> tr.bucksh
		for _, e := range tr.entries[tr.heads[b]:tr.heads[b+1]] {
			if e.off != 0 || e.gram != g {
				continue
			}
			if f := m.forms[e.form].b; len(f) > len(t) && bytes.Equal(f[:len(t)], t) {
				return true
			}
		}
	}
	return false
}

// newTier builds the tables of forms[in], read q bytes at a time. The
// bitset has about 16 bits per gram, so that a text's gram that no form
// holds passes it about once in 16 reads; there are about two grams to a
// bucket. The entries are placed by a counting sort on their bucket.
func newTier(forms []form, in []uint32, q int) tier {
	shortest := len(forms[in[0]].b)
	for _, i := range in {
		shortest = min(shortest, len(forms[i].b))
	}
	t := tier{q: q, stride: min(shortest-q+1, maxStride)}
	n := len(in) * t.stride
	lg := max(bits.Len(uint(n))+4, 12)
	if q == 2 {
		lg = 16
	}
	t.bitset = make([]uint64, 1<<(lg-6))
	t.bitsh = uint(64 - lg)
	nb := max(bits.Len(uint(n))-1, 4)
	t.bucksh = uint(64 - nb)
	t.heads = make([]uint32, 1<<nb+1)
	for _, i := range in {
		for off := range t.stride {
			g := t.gram(forms[i].b, off)
			bit := g * hashMul >> t.bitsh
			if q == 2 {
				bit = g
			}
			t.bitset[bit>>6] |= 1 << (bit & 63)
			t.heads[g*hashMul>>t.bucksh+1]++
		}
	}
	for b := 1; b < len(t.heads); b++ {
		t.heads[b] += t.heads[b-1]
	}
	next := slices.Clone(t.heads[:len(t.heads)-1]) // where each bucket's next entry goes
	t.entries = make([]entry, n)
	for _, i := range in {
		for off := range t.stride {
			g := t.gram(forms[i].b, off)
			b := g * hashMul >> t.bucksh
			t.entries[next[b]] = entry{gram: g, form: i, off: uint32(off)}
			next[b]++
		}
	}
	return t
}

// gram is the q bytes of b at off.
func (t *tier) gram(b []byte, off int) uint64 {
	switch t.q {
	case 8:
		return binary.LittleEndian.Uint64(b[off:])
	case 4:
		return uint64(binary.LittleEndian.Uint32(b[off:]))
	}
	return uint64(binary.LittleEndian.Uint16(b[off:]))
}

// find appends to dst every occurrence in text that starts in [from,
// limit) and ends in text, in no particular order. before is the byte
// that precedes text, or -1 where text starts the stream; a form that
// ends text is taken to end the stream too (find is called so that it
// does, or so that no form under Anywhere bytes that ends text starts
// before limit: see hold).
func (m *matcher) find(dst []match, text []byte, from, limit, before int) []match {
	for i := range m.tiers {
		dst = m.findIn(&m.tiers[i], dst, text, from, limit, before)
	}
	return dst
}

// findIn is find in one tier.
func (m *matcher) findIn(t *tier, dst []match, text []byte, from, limit, before int) []match {
	// A read at j finds occurrences that start in (j-stride, j].
	stop := min(limit+t.stride-1, len(text)-t.q+1)
	set, sh, step := t.bitset, t.bitsh, t.stride // kept in registers
	if t.q == 8 {
		for j := from; j < stop; j += step {
			g := binary.LittleEndian.Uint64(text[j:])
			if h := g * hashMul >> sh; set[h>>6]&(1<<(h&63)) != 0 {
				dst = m.verify(t, dst, text, j, g, from, limit, before)
			}
		}
		return dst
	}
	if t.q == 4 {
		for j := from; j < stop; j += step {
			g := uint64(binary.LittleEndian.Uint32(text[j:]))
			if h := g * hashMul >> sh; set[h>>6]&(1<<(h&63)) != 0 {
				dst = m.verify(t, dst, text, j, g, from, limit, before)
			}
		}
		return dst
	}
	for j := from; j < stop; j += step {
		g := uint64(binary.LittleEndian.Uint16(text[j:]))
		if set[g>>6]&(1<<(g&63)) != 0 {
			dst = m.verify(t, dst, text, j, g, from, limit, before)
		}
	}
	return dst
}

// verify appends the occurrences of t's forms whose gram at some offset
// is g, read at j.
func (m *matcher) verify(t *tier, dst []match, text []byte, j int, g uint64, from, limit, before int) []match {
	b := g * hashMul >> t.bucksh
	for _, e := range t.entries[t.heads[b]:t.heads[b+1]] {
		if e.gram != g {
			continue
		}
		f := &m.forms[e.form]
		p := j - int(e.off)
		end := p + len(f.b)
		if p < from || p >= limit || end > len(text) || !bytes.Equal(text[p:end], f.b) {
			continue
		}
		if f.boundary && !apart(text, p, end, before) {
			continue
		}
		dst = append(dst, match{start: p, end: end, value: f.value})
	}
	return dst
}

// apart reports whether text[p:end] has no letter or digit beside it.
func apart(text []byte, p, end, before int) bool {
	left := before
	if p > 0 {
		left = int(text[p-1])
	}
	if left >= 0 && alnum(byte(left)) {
		return false
	}
	return end == len(text) || !alnum(text[end])
}

// alnum reports whether c is an ASCII letter or digit.
func alnum(c byte) bool {
	return c-'0' < 10 || (c|0x20)-'a' < 26
}
