package file

import (
	"cmp"
	"context"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/internal/seal"
)

// SetHistory implements vault.Store.
func (f *Vault) SetHistory(h vault.History) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hist = h
}

// Chain implements vault.Store: the name's line, both its parts opened.
func (f *Vault) Chain(ctx context.Context, name string) (vault.Chain, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.lookupReady(vault.EpochOf(ctx)); err != nil {
		return vault.Chain{}, err
	}
	c, ok, err := f.lookupChain(f.k.Slot(name), name)
	if err == nil && (!ok || !c.Known()) {
		return vault.Chain{}, vault.ErrNotFound // a line that holds nothing: a damaged record's rm
	}
	return c, err
}

// ListDeleted implements vault.Store: only the lines with no current
// record are opened.
func (f *Vault) ListDeleted(context.Context) ([]vault.Meta, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.refreshIndexed(); err != nil {
		return nil, err
	}
	var out []vault.Meta
	for _, e := range f.cur.entries {
		if currentPart(e.blob) != "" {
			continue
		}
		c, err := f.openLine(e)
		if err != nil {
			return nil, err
		}
		if c.Deleted() && len(c.Previous) > 0 {
			m := c.Previous[0].Meta
			m.Touch = &vault.Touch{DeletedAt: c.DeletedAt}
			out = append(out, m)
		}
	}
	return vault.SortByName(out), nil
}

// Chains implements vault.Store.
func (f *Vault) Chains(context.Context) ([]vault.Chain, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.refreshIndexed(); err != nil {
		return nil, err
	}
	out := make([]vault.Chain, 0, len(f.cur.entries))
	for _, e := range f.cur.entries {
		c, err := f.openLine(e)
		if err != nil {
			return nil, err
		}
		if c.Known() {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b vault.Chain) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// openLine opens the chain of one line, which must be in its name's slot.
func (f *Vault) openLine(e entry) (vault.Chain, error) {
	c, err := openChain(f.k, e.slot, e.blob)
	if err == nil && f.k.Slot(c.Name) != e.slot {
		err = seal.ErrAuth
	}
	if err != nil {
		return vault.Chain{}, fmt.Errorf("vault %s: record %s: %w", f.path, e.slot, err)
	}
	return c, nil
}

// A changes cursor is "f1.<vault id>.<gen>.<slot>.<mark>": the vault id in
// hex, the place in the order of changes, by generation then slot, up to
// which the caller has seen every line (an empty slot is the whole of
// gen), and the mark of the file at gen (contents.markAt: the id of the
// commit that stamped gen, or the hash of the lines of a file no commit
// marked), 16 hex digits.
const cursorPrefix = "f1."

// cursor is a parsed changes cursor.
type cursor struct {
	vaultID string
	gen     uint64
	slot    string // "": every line of gen seen
	mark    string
}

func (c cursor) String() string {
	return cursorPrefix + c.vaultID + "." + strconv.FormatUint(c.gen, 10) + "." + c.slot + "." + c.mark
}

// parseCursor accepts only the form String makes.
func parseCursor(s string) (cursor, error) {
	parts := strings.Split(strings.TrimPrefix(s, cursorPrefix), ".")
	if !strings.HasPrefix(s, cursorPrefix) || len(parts) != 4 {
		return cursor{}, vault.ErrBadCursor
	}
	c := cursor{vaultID: parts[0], slot: parts[2], mark: parts[3]}
	gen, ok := parseGen(parts[1])
	if !ok || !lowerHex(c.vaultID, 2*seal.VaultIDSize) || c.slot != "" && !lowerHex(c.slot, slotHexSize) || !lowerHex(c.mark, commitIDHex) {
		return cursor{}, vault.ErrBadCursor
	}
	c.gen = gen
	return c, nil
}

// lowerHex reports whether s is n lowercase hex digits.
func lowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}

// after reports whether a line of gen in slot comes after c.
func (c cursor) after(gen uint64, slot string) bool {
	return gen > c.gen || gen == c.gen && c.slot != "" && slot > c.slot
}

// Changes implements vault.Store. Every commit stamps the lines it writes
// with the next generation, so the lines after a cursor are the names
// changed since: none at all, and nothing to read, when the cursor is the
// vault's current one. A cursor of another vault id (a rekey, another
// vault), of a generation the file does not reach, or whose mark is not
// the file's at its generation answers Reset: the file was put back from
// an older copy and written again since, the commit is older than the
// marks the header keeps, or a file no commit marked (written by an
// earlier arca, whose lines carry no generation) changed or was written
// since by this one.
func (f *Vault) Changes(ctx context.Context, since string, limit int) (vault.Changes, error) {
	var from cursor
	if since != "" {
		var err error
		if from, err = parseCursor(since); err != nil {
			return vault.Changes{}, err
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.refreshIn(vault.EpochOf(ctx)); err != nil {
		return vault.Changes{}, err
	}
	if err := f.index(); err != nil {
		return vault.Changes{}, err
	}
	now := cursor{vaultID: f.k.VaultIDHex(), gen: f.cur.gen}
	now.mark, _ = f.cur.markAt(now.gen) // the newest commit's, or the lines'
	if since == "" {
		return vault.Changes{Cursor: now.String()}, nil
	}
	if from.vaultID != now.vaultID || from.gen > now.gen {
		return vault.Changes{Cursor: now.String(), Reset: true}, nil
	}
	if mark, ok := f.cur.markAt(from.gen); !ok || mark != from.mark {
		return vault.Changes{Cursor: now.String(), Reset: true}, nil
	}
	if from.gen == now.gen && from.slot == "" {
		return vault.Changes{Cursor: now.String()}, nil
	}
	return f.changesAfter(from, now, limit)
}

// changesAfter is Changes of the lines after from; now is the cursor
// after every line. Callers hold f.mu and have indexed the lines.
func (f *Vault) changesAfter(from, now cursor, limit int) (vault.Changes, error) {
	if limit <= 0 || limit > vault.MaxChanges {
		limit = vault.MaxChanges
	}
	type hit struct {
		gen uint64
		e   *entry
	}
	var hits []hit
	for i := range f.cur.entries {
		e := &f.cur.entries[i]
		if p, _ := splitBlob(e.blob); from.after(p.gen, e.slot) {
			hits = append(hits, hit{p.gen, e})
		}
	}
	slices.SortFunc(hits, func(a, b hit) int {
		return cmp.Or(cmp.Compare(a.gen, b.gen), strings.Compare(a.e.slot, b.e.slot))
	})
	out := vault.Changes{Cursor: now.String()}
	if len(hits) > limit {
		hits, out.Truncated = hits[:limit], true
		last := hits[limit-1]
		// Every gen after from's has its commit's mark: the header keeps
		// the newest, and from's is among them.
		mark, _ := f.cur.markAt(last.gen)
		out.Cursor = cursor{vaultID: now.vaultID, gen: last.gen, slot: last.e.slot, mark: mark}.String()
	}
	for _, h := range hits {
		c, err := f.openLine(*h.e)
		if err != nil {
			return vault.Changes{}, err
		}
		st, v := c.State()
		out.Changes = append(out.Changes, vault.Change{Name: c.Name, Version: v, State: st, At: changedAt(c)})
	}
	return out, nil
}

// changedAt is when c last changed state, UTC.
func changedAt(c vault.Chain) time.Time {
	if c.ChangedAt.IsZero() {
		return c.Current.UpdatedAt
	}
	return c.ChangedAt.UTC()
}
