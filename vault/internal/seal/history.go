package seal

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"slices"
	"time"

	"golang.org/x/crypto/chacha20poly1305"

	"github.com/arca-secrets/arca/vault"
)

// A name's chain is stored as two sealed parts: its current record,
// sealed by Seal exactly as a record always was (so a get opens only it),
// and its history part, sealed by SealHistory under associated data of its
// own ("arca-history-v1", the vault id, the slot): the name, the highest
// version it had, the version its current record must have, when it was
// deleted and last changed, and every kept earlier version with its value.
// A history part cannot be opened as a record or moved to another slot or
// vault, and OpenChain refuses a current record whose version is not the
// one its history part names, so an earlier version cannot be replayed as
// current beside a later history part.

const historyFmt = 1

// historyAD is a history part's associated data.
func (k *Keys) historyAD(slot string) []byte {
	k.adBuf = append(k.adBuf[:0], "arca-history-v1\x00"...)
	k.adBuf = append(k.adBuf, k.vaultID...)
	k.adBuf = append(k.adBuf, slot...)
	return k.adBuf
}

// SealHistory seals the history part of c for slot: nonce || ciphertext.
func (k *Keys) SealHistory(slot string, c vault.Chain) ([]byte, error) {
	return k.AppendSealHistory(nil, slot, c)
}

// AppendSealHistory appends what SealHistory makes of c to dst.
func (k *Keys) AppendSealHistory(dst []byte, slot string, c vault.Chain) ([]byte, error) {
	k.plain = appendHistory(k.plain[:0], c)
	n := k.aead.NonceSize()
	dst = slices.Grow(dst, n+len(k.plain)+chacha20poly1305.Overhead)
	nonce := dst[len(dst) : len(dst)+n]
	if _, err := rand.Read(nonce); err != nil {
		clear(k.plain)
		return nil, err
	}
	out := k.aead.Seal(dst[:len(dst)+n], nonce, k.plain, k.historyAD(slot))
	clear(k.plain)
	return out, nil
}

// HistorySize is the length of what SealHistory makes of c, known before
// it is sealed: the nonce, the encoded history part, the tag.
func HistorySize(c vault.Chain) int {
	n := chacha20poly1305.NonceSizeX + chacha20poly1305.Overhead + 1 +
		uvarintLen(c.Highest) + uvarintLen(c.CurrentVersion()) +
		varintLen(nanos(c.ChangedAt)) + varintLen(nanos(c.DeletedAt)) +
		uvarintLen(uint64(len(c.Name))) + len(c.Name) + uvarintLen(uint64(len(c.Previous)))
	var d timeDeltas
	for _, r := range c.Previous {
		n += uvarintLen(r.Version) + d.size(r) + uvarintLen(uint64(r.Value.Len())) + r.Value.Len()
	}
	return n
}

// uvarintLen is the length of binary.AppendUvarint's encoding of v.
func uvarintLen(v uint64) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}

// varintLen is the length of binary.AppendVarint's encoding of v.
func varintLen(v int64) int {
	u := uint64(v) << 1
	if v < 0 {
		u = ^u
	}
	return uvarintLen(u)
}

// OpenChain opens the chain stored in slot from its parts: current, its
// current record as Seal made it (nil when it has none), and history, its
// history part (nil for a name written before vaults kept history: its
// chain is its current record alone). Both blobs are overwritten. A part
// that fails to authenticate, or a current record that is not the version
// its history part names, is ErrAuth.
func (k *Keys) OpenChain(slot string, current, history []byte) (vault.Chain, error) {
	var c vault.Chain
	if current != nil {
		r, err := k.Open(slot, current)
		if err != nil {
			return vault.Chain{}, err
		}
		c.Name, c.Current, c.HasCurrent, c.Highest = r.Name, r, true, r.Version
	}
	if history == nil {
		if current == nil {
			return vault.Chain{}, ErrAuth
		}
		return c, nil
	}
	n := k.aead.NonceSize()
	if len(history) < n {
		return vault.Chain{}, ErrAuth
	}
	pt, err := k.aead.Open(history[n:n], history[:n], history[n:], k.historyAD(slot))
	if err != nil {
		return vault.Chain{}, ErrAuth
	}
	h, want, err := decodeHistory(pt)
	if err != nil {
		return vault.Chain{}, err
	}
	if want != c.CurrentVersion() || (c.HasCurrent && c.Name != h.Name) {
		return vault.Chain{}, ErrAuth
	}
	h.Current, h.HasCurrent = c.Current, c.HasCurrent
	return h, nil
}

// History part plaintext: format byte, then uvarints (u) and varints (v):
// highest (u), current version (u, 0: none), changed and deleted (v, unix
// nanoseconds; deleted 0: not deleted), name (u length, bytes), the count
// of earlier versions (u) and each one newest first: version (u), created,
// updated, rotated (v, each the difference from the same time of the
// version before it, 0 before the first; a time 0: never), value (u
// length, bytes).
func appendHistory(dst []byte, c vault.Chain) []byte {
	dst = append(dst, historyFmt)
	dst = binary.AppendUvarint(dst, c.Highest)
	dst = binary.AppendUvarint(dst, c.CurrentVersion())
	dst = binary.AppendVarint(dst, nanos(c.ChangedAt))
	dst = binary.AppendVarint(dst, nanos(c.DeletedAt))
	dst = binary.AppendUvarint(dst, uint64(len(c.Name)))
	dst = append(dst, c.Name...)
	dst = binary.AppendUvarint(dst, uint64(len(c.Previous)))
	var d timeDeltas
	for _, r := range c.Previous {
		dst = binary.AppendUvarint(dst, r.Version)
		dst = d.append(dst, r)
		v := r.Value.Reveal()
		dst = binary.AppendUvarint(dst, uint64(len(v)))
		dst = append(dst, v...)
	}
	return dst
}

// timeDeltas codes the times of a name's earlier versions, newest first,
// each as the difference from the same time of the version before it (0
// before the first): versions share their created time and are written
// close together, so most differences take one to six bytes, not nine.
type timeDeltas struct{ prev [3]int64 }

func (d *timeDeltas) next(r vault.Record) (deltas [3]int64) {
	for i, t := range [3]time.Time{r.CreatedAt, r.UpdatedAt, r.RotatedAt} {
		x := nanos(t)
		deltas[i], d.prev[i] = x-d.prev[i], x
	}
	return deltas
}

func (d *timeDeltas) append(dst []byte, r vault.Record) []byte {
	for _, x := range d.next(r) {
		dst = binary.AppendVarint(dst, x)
	}
	return dst
}

func (d *timeDeltas) size(r vault.Record) (n int) {
	for _, x := range d.next(r) {
		n += varintLen(x)
	}
	return n
}

// read decodes the three times of the next version.
func (d *timeDeltas) read(r *historyReader) (created, updated, rotated time.Time) {
	var at [3]time.Time
	for i := range at {
		d.prev[i] += r.v()
		at[i] = fromNanos(d.prev[i])
	}
	return at[0], at[1], at[2]
}

func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

var errHistory = errors.New("malformed history part")

// historyReader decodes a history part, keeping the first error.
type historyReader struct {
	b   []byte
	err error
}

func (r *historyReader) u() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err, r.b = errHistory, nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *historyReader) v() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err, r.b = errHistory, nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *historyReader) bytes() []byte {
	n := r.u()
	if r.err != nil || n > uint64(len(r.b)) {
		r.err, r.b = errHistory, nil
		return nil
	}
	out := r.b[:n:n]
	r.b = r.b[n:]
	return out
}

// decodeHistory decodes a history part's plaintext: the chain without its
// current record, and the version that record must have. Earlier versions
// must be newest first, below the current one and at most the highest.
func decodeHistory(pt []byte) (vault.Chain, uint64, error) {
	if len(pt) == 0 || pt[0] != historyFmt {
		return vault.Chain{}, 0, errors.New("unknown history format")
	}
	r := historyReader{b: pt[1:]}
	var c vault.Chain
	c.Highest = r.u()
	cur := r.u()
	c.ChangedAt, c.DeletedAt = fromNanos(r.v()), fromNanos(r.v())
	c.Name = string(r.bytes())
	count := r.u()
	if r.err != nil || count > uint64(len(r.b)) {
		return vault.Chain{}, 0, errHistory
	}
	// Each record is decoded where it lies: a copy of one into the slice
	// would move its pointers through the write barrier.
	c.Previous = make([]vault.Record, count)
	below := cur
	if cur == 0 {
		below = c.Highest + 1
	}
	var d timeDeltas
	for i := range c.Previous {
		rec := &c.Previous[i]
		rec.Name, rec.Version = c.Name, r.u()
		rec.CreatedAt, rec.UpdatedAt, rec.RotatedAt = d.read(&r)
		rec.Value = vault.NewSecret(r.bytes())
		if r.err != nil || rec.Version == 0 || rec.Version >= below {
			return vault.Chain{}, 0, errHistory
		}
		below = rec.Version
	}
	if r.err != nil || len(r.b) != 0 || cur > c.Highest {
		return vault.Chain{}, 0, errHistory
	}
	return c, cur, nil
}
