package file

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/internal/seal"
)

// A record line holds everything the vault keeps of one name, its chain,
// under the name's slot. Its blob has one of two forms:
//
//	<current>                      a line an earlier arca wrote (legacy)
//	<current>.<gen>.<history>      a line this arca wrote
//
// current is the name's current record sealed as a record always was
// (seal.Keys.AppendSeal), base64; empty when the name has none (it is
// soft-deleted, or every version was erased). gen is the vault generation
// at which the line last changed: decimal, no leading zero, at least 1.
// history is the history part (seal.Keys.AppendSealHistory), base64: the
// name, its highest version, its soft delete and its earlier versions. A
// legacy line's chain is its current record alone, at generation 0. "." is
// not in the base64 alphabet, so a get reads the current record up to the
// first "." and opens nothing else.

// blobParts is a line's blob split into its parts.
type blobParts struct {
	cur  string // the current record, base64; "" when none
	gen  uint64 // 0 for a legacy line
	hist string // the history part, base64; "" for a legacy line
}

// splitBlob splits a line's blob, accepting only the two forms.
func splitBlob(blob string) (blobParts, bool) {
	i := strings.IndexByte(blob, '.')
	if i < 0 {
		return blobParts{cur: blob}, blob != ""
	}
	rest := blob[i+1:]
	j := strings.IndexByte(rest, '.')
	if j < 0 {
		return blobParts{}, false
	}
	gen, ok := parseGen(rest[:j])
	hist := rest[j+1:]
	if !ok || gen == 0 || hist == "" || strings.IndexByte(hist, '.') >= 0 {
		return blobParts{}, false
	}
	return blobParts{cur: blob[:i], gen: gen, hist: hist}, true
}

// currentPart is the current record of a line's blob, "" when it has
// none: all a get reads.
func currentPart(blob string) string {
	if i := strings.IndexByte(blob, '.'); i >= 0 {
		return blob[:i]
	}
	return blob
}

// parseGen parses a generation in its one form: decimal digits, no sign,
// no leading zero.
func parseGen(s string) (uint64, bool) {
	if s == "" || len(s) > 1 && s[0] == '0' {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	g, err := strconv.ParseUint(s, 10, 64)
	return g, err == nil
}

// openChain opens the chain a line of slot holds. A legacy line's chain
// last changed when its record was written.
func openChain(k *seal.Keys, slot, blob string) (vault.Chain, error) {
	p, ok := splitBlob(blob)
	if !ok {
		return vault.Chain{}, seal.ErrAuth
	}
	// Both parts decoded into one buffer: one allocation.
	buf := make([]byte, 0, base64.StdEncoding.DecodedLen(len(p.cur))+base64.StdEncoding.DecodedLen(len(p.hist)))
	var cur, hist []byte
	var err error
	if p.cur != "" {
		if cur, err = appendBlob(buf, p.cur); err != nil {
			return vault.Chain{}, err
		}
	}
	if p.hist != "" {
		if hist, err = appendBlob(buf[len(cur):len(cur)], p.hist); err != nil {
			return vault.Chain{}, err
		}
	}
	c, err := k.OpenChain(slot, cur, hist)
	if err == nil && p.hist == "" {
		c.ChangedAt = c.Current.UpdatedAt
	}
	return c, err
}

// lookupChain opens the chain in slot, which must be name's. exists is
// whether a line holds slot, even one that fails to open.
func (f *Vault) lookupChain(slot, name string) (c vault.Chain, exists bool, err error) {
	b64, ok, err := f.find(slot)
	if err != nil || !ok {
		return vault.Chain{}, false, err
	}
	c, err = openChain(f.k, slot, b64)
	if err == nil && c.Name != name {
		err = seal.ErrAuth
	}
	if err != nil {
		return vault.Chain{}, true, fmt.Errorf("vault %s: record %s: %w", f.path, slot, err)
	}
	return c, true, nil
}

// appendChainBlob appends to dst the blob of the line that holds c in
// slot at generation gen, sealed by k (into raw, returned for reuse).
func appendChainBlob(k *seal.Keys, dst, raw []byte, slot string, c vault.Chain, gen uint64) ([]byte, []byte, error) {
	var err error
	if c.HasCurrent {
		if raw, err = k.AppendSeal(raw[:0], slot, c.Current); err != nil {
			return dst, raw, err
		}
		dst = appendEncoded(dst, raw)
	}
	dst = append(dst, '.')
	dst = strconv.AppendUint(dst, gen, 10)
	dst = append(dst, '.')
	if raw, err = k.AppendSealHistory(raw[:0], slot, c); err != nil {
		return dst, raw, err
	}
	return appendEncoded(dst, raw), raw, nil
}

// chainLine is the size of the line that holds c at generation gen
// (lineSize).
func chainLine(c vault.Chain, gen uint64) int64 {
	n := 0
	if c.HasCurrent {
		n = base64.StdEncoding.EncodedLen(seal.SealedSize(c.Current))
	}
	n += len("..") + len(strconv.FormatUint(gen, 10)) + base64.StdEncoding.EncodedLen(seal.HistorySize(c))
	return lineSize(n)
}

// stepLine is what w makes of a line: c is the chain it holds (exists:
// there is a line; lerr: it failed to open). It returns the chain to store
// and the metadata the write answers. A remove of a line that fails to
// authenticate, the way out of a damaged record, leaves the name erased
// with nothing kept, not even a highest version (what it had cannot be
// told), so that changes reports it, as the shared vault does.
func stepLine(w vault.Write, c vault.Chain, exists bool, lerr error, h vault.History, now time.Time) (vault.Chain, vault.Meta, error) {
	if lerr != nil {
		if exists && w.Kind == vault.Remove {
			return vault.Chain{Name: w.Name, ChangedAt: now.UTC()}, vault.Meta{Name: w.Name, Touch: &vault.Touch{Gone: true}}, nil
		}
		return vault.Chain{}, vault.Meta{}, lerr
	}
	next, m, err := vault.Step(w, c, h, now)
	next.Current.Created = false // what a later write of the name finds
	return next, m, err
}
