package file

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"filippo.io/age"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/internal/seal"
)

// Recipients implements vault.Keyed.
func (f *Vault) Recipients(_ context.Context) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.refreshByPath(); err != nil {
		return nil, err
	}
	return slices.Clone(f.cur.hdr.Recipients), nil
}

// SetRecipients implements vault.Keyed: the vault is rewritten with the same
// records and a header whose data key is wrapped to rs, under the writer
// lock, if its recipients are still from. It stamps no line, so the
// header's commit marks stay as they are, and with them every changes
// cursor: no name changed.
func (f *Vault) SetRecipients(_ context.Context, from []string, rs []age.Recipient) error {
	return f.rewrite(func() (contents, error) {
		if !slices.Equal(f.cur.hdr.Recipients, from) {
			return contents{}, fmt.Errorf("vault %s: %w", f.path, vault.ErrRecipientsChanged)
		}
		c := f.cur
		hdr, err := fileHeader(f.k, rs)
		hdr.Commits = f.cur.hdr.Commits
		c.hdr = hdr
		return c, err
	})
}

// Rekey implements vault.Keyed: every line, its current record and its
// history part, is opened and sealed again under a fresh data key and
// vault id (so every slot id changes too, and every changes cursor resets),
// and the vault is rewritten whole, under the writer lock. The new vault's
// commit marks start over: one, at its highest generation.
func (f *Vault) Rekey(_ context.Context) (int, error) {
	var n int
	err := f.rewrite(func() (contents, error) {
		rs, err := seal.ParseRecipients(f.cur.hdr.Recipients)
		if err != nil {
			return contents{}, fmt.Errorf("vault %s: %w", f.path, err)
		}
		nk, err := seal.Fresh()
		if err != nil {
			return contents{}, err
		}
		c := contents{entries: make([]entry, 0, len(f.cur.entries))}
		if c.hdr, err = fileHeader(nk, rs); err != nil {
			return contents{}, err
		}
		var buf, raw []byte
		var top uint64 // the highest generation of a line
		for _, e := range f.cur.entries {
			ch, err := openChain(f.k, e.slot, e.blob)
			if err != nil {
				return contents{}, fmt.Errorf("vault %s: record %s: %w (rm the record or restore it before a rekey)", f.path, e.slot, err)
			}
			// Each line keeps its generation (a legacy line takes the next):
			// every cursor resets with the vault id anyway.
			gen := f.cur.gen + 1
			if p, _ := splitBlob(e.blob); p.gen > 0 {
				gen = p.gen
			}
			top = max(top, gen)
			slot := nk.Slot(ch.Name)
			if buf, raw, err = appendChainBlob(nk, buf[:0], raw, slot, ch, gen); err != nil {
				return contents{}, err
			}
			c.entries = append(c.entries, entry{slot: slot, blob: string(buf)})
			if ch.HasCurrent {
				n++
			}
		}
		slices.SortFunc(c.entries, func(a, b entry) int { return strings.Compare(a.slot, b.slot) })
		c.hdr, err = withCommit(c.hdr, top)
		return c, err
	})
	return n, err
}

// rewrite replaces the vault with what next makes of the current one,
// under f.mu and the writer lock; the next op reads it back.
func (f *Vault) rewrite(next func() (contents, error)) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	dest, unlock, err := lockTarget(f.path)
	if err != nil {
		return err
	}
	defer unlock()
	if err := f.refreshAt(dest); err != nil {
		return err
	}
	if err := f.index(); err != nil {
		return err
	}
	c, err := next()
	if err != nil {
		return err
	}
	if err := f.opt.replace(dest, f.path, &c, f.heldInfo.Size()); err != nil {
		return err
	}
	f.stale = true
	return nil
}

// fileHeader is a file vault's header for keys k, wrapped to rs.
func fileHeader(k *seal.Keys, rs []age.Recipient) (header, error) {
	return seal.NewHeader(fileFormat, k, rs)
}
