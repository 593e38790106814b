package bulk

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/arca-secrets/arca/ops/ref"
	"github.com/arca-secrets/arca/ops/secretfile"
	"github.com/arca-secrets/arca/vault"
)

// Item is one record of a bulk write: a migration or a restore.
type Item struct {
	Ref   string // "ns/name"
	Value vault.Secret
	// Meta, for a restore, is the version and times the record keeps; nil
	// for a migration, whose records are put.
	Meta *vault.Meta
	// Chain, for a restore from a backup, is the whole name as the backup
	// holds it: its current record (Value is its value), its earlier
	// versions, its soft delete and its highest version. Meta is then nil.
	Chain *vault.Chain
	Where string // where in the request's Source the item was read ("line 3"); "" when Source says it
}

// current reports whether the item makes a current record: a name the
// backup holds soft-deleted, or only as its highest version, does not.
func (it Item) current() bool { return it.Chain == nil || it.Chain.HasCurrent }

// eachValue calls f with every value the item writes: its value, and
// those of the earlier versions of its chain.
func (it Item) eachValue(f func(vault.Secret) error) error {
	if it.current() {
		if err := f(it.Value); err != nil {
			return err
		}
	}
	if it.Chain == nil {
		return nil
	}
	for _, r := range it.Chain.Previous {
		if err := f(r.Value); err != nil {
			return err
		}
	}
	return nil
}

// Items is what a bulk write writes, read by index. A bulk write holds
// its records in whatever form it read them, and the service never copies
// them all.
type Items interface {
	Len() int
	At(i int) Item
}

// ItemList is Items held in a slice.
type ItemList []Item

// Len implements Items.
func (l ItemList) Len() int { return len(l) }

// At implements Items.
func (l ItemList) At(i int) Item { return l[i] }

// Records is Items of vault records: a restore writes each with its
// version and times.
type Records []vault.Record

// Len implements Items.
func (rs Records) Len() int { return len(rs) }

// At implements Items.
func (rs Records) At(i int) Item {
	return Item{Ref: rs[i].Name, Value: rs[i].Value, Meta: &rs[i].Meta}
}

// Chains is Items of the names of a backup: a restore writes each whole,
// with every version it keeps.
type Chains []vault.Chain

// Len implements Items.
func (cs Chains) Len() int { return len(cs) }

// At implements Items.
func (cs Chains) At(i int) Item {
	c := &cs[i]
	return Item{Ref: c.Name, Value: c.Current.Value, Chain: c}
}

// Packed is Items held compactly, for a migration of many secrets: every
// ref and place in one string, every value in one byte slice, and three
// offsets a record. A record costs its bytes and 12 more, where an Item
// with strings and a value of its own costs some 150.
type Packed struct {
	text   strings.Builder // each record's ref, then its place
	values []byte
	recs   []packedRec
}

// packedRec is where a record ends in text (its ref, then its place) and
// in values; it starts where the one before it ended.
type packedRec struct{ refEnd, whereEnd, valueEnd uint32 }

// ErrPackedFull is Add's error for records past what offsets of 32 bits
// reach (4 GiB of text or of values), far beyond any input arca reads.
var ErrPackedFull = errors.New("too many bytes of records to hold")

// NewPacked is an empty Packed with room for n records, text bytes of
// refs and places and values bytes of values, so that a large migration
// is allocated once rather than grown into.
func NewPacked(n, text, values int) *Packed {
	p := &Packed{values: make([]byte, 0, values), recs: make([]packedRec, 0, n)}
	p.text.Grow(text)
	return p
}

// Add appends a record: its ref is ns + "/" + name, value is copied.
func (p *Packed) Add(ns, name string, value []byte, where string) error {
	if !fitsUint32(p.text.Len(), len(ns)+1+len(name)+len(where)) || !fitsUint32(len(p.values), len(value)) {
		return ErrPackedFull
	}
	p.text.WriteString(ns)
	p.text.WriteByte('/')
	p.text.WriteString(name)
	refEnd := p.text.Len()
	p.text.WriteString(where)
	p.values = append(p.values, value...)
	p.recs = append(p.recs, packedRec{uint32(refEnd), uint32(p.text.Len()), uint32(len(p.values))})
	return nil
}

// fitsUint32 reports whether have+more bytes are still reached by an
// offset of 32 bits.
func fitsUint32(have, more int) bool { return uint64(have)+uint64(more) <= math.MaxUint32 }

// Len implements Items.
func (p *Packed) Len() int { return len(p.recs) }

// At implements Items. The ref, place and value are slices of what p
// holds: nothing is allocated.
func (p *Packed) At(i int) Item {
	var start packedRec
	if i > 0 {
		start = p.recs[i-1]
	}
	r, text := p.recs[i], p.text.String()
	return Item{
		Ref:   text[start.whereEnd:r.refEnd],
		Value: vault.NewSecret(p.values[start.valueEnd:r.valueEnd:r.valueEnd]),
		Where: text[r.refEnd:r.whereEnd],
	}
}

// Landing says where a migration's entries land, and what is left out.
type Landing struct {
	NS        string // the namespace of a flat input's names
	NSPrefix  string // written before each namespace of a nested input
	SkipEmpty bool   // leave out an entry whose value is empty; else it is refused
}

// PackReport tells what Pack did beyond packing: the keys it left out and
// those whose values hold references stored as written, each a name (of
// a flat input) or ns/name (of a nested one), in input order. Never a
// value.
type PackReport struct {
	Empty []string // left out: their value is empty (Landing.SkipEmpty)
	Refs  []string // their value holds a $NAME or ${NAME} a dotenv reader would expand (secretfile.Entry.Refs)
}

// Pack parses data as format, as secretfile.ParseEach does, into Packed
// items: a flat input's entries are named in namespace land.NS, a nested
// one's in land.NSPrefix followed by their own, which must be a valid
// segment. An entry whose value is empty is left out with
// land.SkipEmpty, else refused (arca stores no empty value). Each entry
// is packed as it is read, so a large input's entries are never held
// twice, nor each in strings of its own.
func Pack(data []byte, format string, o secretfile.Options, land Landing) (*Packed, PackReport, secretfile.Shape, error) {
	// One entry a line at most; its name and place are at most half its
	// line, its value at most the line.
	n := secretfile.SizeHint(data)
	p := NewPacked(n, len(data)/2+n*(len(land.NS)+len(land.NSPrefix)+1), len(data))
	var rep PackReport
	shape, err := secretfile.ParseEach(data, format, o, func(e secretfile.Entry) error {
		ns, key := land.NS, e.Name
		if e.NS != "" {
			ns = land.NSPrefix + e.NS
			if prob := ref.SegmentProblem(ns); prob != "" {
				return fmt.Errorf("%s: the namespace --ns-prefix makes of %s is not a valid name: %s", e.Where, strconv.QuoteToASCII(e.NS), prob)
			}
			key = ns + "/" + e.Name
		}
		if e.Value.Len() == 0 {
			if !land.SkipEmpty {
				return fmt.Errorf("%s: %s: the value is empty, and arca stores no empty value (--skip-empty leaves such keys out)", e.Where, key)
			}
			rep.Empty = append(rep.Empty, key)
			return nil
		}
		if e.Refs {
			rep.Refs = append(rep.Refs, key)
		}
		return p.Add(ns, e.Name, e.Value.Reveal(), e.Where)
	})
	return p, rep, shape, err
}
