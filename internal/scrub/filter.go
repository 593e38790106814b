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
// It reads a gram (q bytes, q = 4 or 8) at every stride-th position of the
// text only. Every form is at least m bytes long, and stride = m-q+1, so
// an occurrence of any form that starts at p holds a read position j with
// p <= j < p+stride whose gram lies inside it: the gram of the form at
// offset j-p. The grams of every form at offsets 0 to stride-1 are in a
// bitset (one hashed bit each), which almost every read position fails;
// one that passes is looked up in a table of those grams, each naming its
// form and offset, and the form is compared there.
type matcher struct {
	forms   []form
	q       int // the gram's length: 4 or 8 bytes
	stride  int // positions between two reads
	look    int // bytes an occurrence needs in view to be decided
	bitset  []uint64
	bitsh   uint     // a hash's top bits index the bitset: h >> bitsh
	bucksh  uint     // and the buckets: h >> bucksh
	heads   []uint32 // bucket b's entries are entries[heads[b]:heads[b+1]]
	entries []entry
}

// form is one form of one value.
type form struct {
	b        []byte
	value    int  // the value's index in its Set
	boundary bool // shorter than Anywhere: needs neighbours that are not letters or digits
}

type entry struct {
	gram uint64
	form uint32
	off  uint32 // the gram's offset in the form
}

// match is an occurrence of a form: text[start:end], of value.
type match struct {
	start, end, value int
}

const (
	hashMul   = 0x9e3779b97f4a7c15
	maxStride = 32 // more grams per form would cost more table than it saves reads
)

// newMatcher builds the matcher of forms, which are distinct and none
// shorter than MinLen; with no forms it matches nothing.
func newMatcher(forms []form) *matcher {
	m := &matcher{forms: forms}
	if len(forms) == 0 {
		return m
	}
	short := len(forms[0].b)
	for _, f := range forms {
		short = min(short, len(f.b))
		m.look = max(m.look, len(f.b))
		if f.boundary {
			m.look = max(m.look, len(f.b)+1)
		}
	}
	m.q = 4
	if short >= 16 {
		m.q = 8
	}
	m.stride = min(short-m.q+1, maxStride)
	m.buildTables()
	return m
}

// buildTables fills the bitset and the buckets with each form's grams at
// offsets 0 to stride-1. The bitset has about 16 bits per gram, so that a
// text's gram that no form holds passes it about once in 16 reads; there
// are about two grams to a bucket. The entries are placed by a counting
// sort on their bucket: two passes over the grams.
func (m *matcher) buildTables() {
	n := len(m.forms) * m.stride
	lg := max(bits.Len(uint(n))+4, 12)
	m.bitset = make([]uint64, 1<<(lg-6))
	m.bitsh = uint(64 - lg)
	nb := max(bits.Len(uint(n))-1, 4)
	m.bucksh = uint(64 - nb)
	m.heads = make([]uint32, 1<<nb+1)
	for _, f := range m.forms {
		for off := range m.stride {
			h := m.gram(f.b, off) * hashMul
			m.bitset[h>>m.bitsh>>6] |= 1 << (h >> m.bitsh & 63)
			m.heads[h>>m.bucksh+1]++
		}
	}
	for b := 1; b < len(m.heads); b++ {
		m.heads[b] += m.heads[b-1]
	}
	next := slices.Clone(m.heads[:len(m.heads)-1]) // where each bucket's next entry goes
	m.entries = make([]entry, n)
	for i, f := range m.forms {
		for off := range m.stride {
			g := m.gram(f.b, off)
			b := g * hashMul >> m.bucksh
			m.entries[next[b]] = entry{gram: g, form: uint32(i), off: uint32(off)}
			next[b]++
		}
	}
}

// gram is the q bytes of b at off.
func (m *matcher) gram(b []byte, off int) uint64 {
	if m.q == 8 {
		return binary.LittleEndian.Uint64(b[off:])
	}
	return uint64(binary.LittleEndian.Uint32(b[off:]))
}

// find appends to dst every occurrence in text that starts in [from,
// limit) and ends in text, in no particular order. before is the byte
// that precedes text, or -1 where text starts the stream; a form that
// ends text is taken to end the stream too (find is called so that it
// does, or so that no form can).
func (m *matcher) find(dst []match, text []byte, from, limit, before int) []match {
	if len(m.forms) == 0 || limit <= from {
		return dst
	}
	// A read at j finds occurrences that start in (j-stride, j].
	stop := min(limit+m.stride-1, len(text)-m.q+1)
	if m.q == 8 {
		for j := from; j < stop; j += m.stride {
			g := binary.LittleEndian.Uint64(text[j:])
			if h := g * hashMul; m.bitset[h>>m.bitsh>>6]&(1<<(h>>m.bitsh&63)) != 0 {
				dst = m.verify(dst, text, j, g, from, limit, before)
			}
		}
		return dst
	}
	for j := from; j < stop; j += m.stride {
		g := uint64(binary.LittleEndian.Uint32(text[j:]))
		if h := g * hashMul; m.bitset[h>>m.bitsh>>6]&(1<<(h>>m.bitsh&63)) != 0 {
			dst = m.verify(dst, text, j, g, from, limit, before)
		}
	}
	return dst
}

// verify appends the occurrences of forms whose gram at some offset is g,
// read at j.
func (m *matcher) verify(dst []match, text []byte, j int, g uint64, from, limit, before int) []match {
	b := g * hashMul >> m.bucksh
	for _, e := range m.entries[m.heads[b]:m.heads[b+1]] {
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
