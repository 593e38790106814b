package file

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/internal/seal"
)

// lookup decrypts the current record in slot, reading nothing of the
// line past it. ok is false when there is none.
func (f *Vault) lookup(slot, name string) (r vault.Record, ok bool, err error) {
	b64, ok, err := f.find(slot)
	if err != nil {
		return vault.Record{}, false, err
	}
	if b64 = currentPart(b64); !ok || b64 == "" {
		return vault.Record{}, false, nil
	}
	blob, err := decodeBlob(b64)
	if err == nil {
		r, err = f.k.Open(slot, blob)
	}
	if err == nil && r.Name != name {
		err = seal.ErrAuth
	}
	if err != nil {
		return vault.Record{}, true, fmt.Errorf("vault %s: record %s: %w", f.path, slot, err)
	}
	return r, true, nil
}

// find is f.cur.find. Record lines the open left unread are searched by
// pages (pages.go), and a hit there stands if the held file has not been
// edited in place meanwhile; anything else (a miss, which takes a pass over
// every line to prove, a line that fails a check, whose error names its
// line number, a read that gave up) reads the lines whole and searches
// them again, and answers as that search does.
func (f *Vault) find(slot string) (string, bool, error) {
	if p := f.cur.unread; p != nil {
		if b64, ok, err := search(*p, p.n, slot); err == nil && ok && f.sameBytes() {
			return b64, true, nil
		}
		if err := f.readLines(); err != nil {
			return "", false, err
		}
	}
	b64, ok, err := f.cur.find(slot)
	if err != nil {
		return "", false, fmt.Errorf("vault %s is corrupt: %w", f.path, err)
	}
	return b64, ok, nil
}

// Get implements vault.Store.
func (f *Vault) Get(ctx context.Context, name string) (vault.Record, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.lookupReady(vault.EpochOf(ctx)); err != nil {
		return vault.Record{}, err
	}
	r, ok, err := f.lookup(f.k.Slot(name), name)
	if err == nil && !ok {
		err = vault.ErrNotFound
	}
	return r, err
}

// lookupReady readies the handle for a lookup by name: the vault reread if
// it changed (once per read epoch). The first lookup after a read searches
// the lines as they are; a handle that looks up again is long-lived and
// indexes them all once. Callers hold f.mu.
func (f *Vault) lookupReady(epoch uint64) error {
	if err := f.refreshIn(epoch); err != nil {
		return err
	}
	if f.lookups++; f.lookups > 1 {
		return f.index()
	}
	return nil
}

// List implements vault.Store.
func (f *Vault) List(_ context.Context) ([]vault.Meta, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.refreshIndexed(); err != nil {
		return nil, err
	}
	metas := make([]vault.Meta, 0, len(f.cur.entries))
	err := f.eachMeta(func(slot string, m vault.Meta, err error) error {
		if err != nil {
			return fmt.Errorf("vault %s: record %s: %w", f.path, slot, err)
		}
		metas = append(metas, m)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return vault.SortByName(metas), nil
}

// eachMeta opens every current record in file order and calls fn with its
// slot and metadata, or with the error that kept it from opening, until fn
// returns an error. Callers hold f.mu.
func (f *Vault) eachMeta(fn func(slot string, m vault.Meta, err error) error) error {
	var buf []byte // reused: only the metadata outlives an iteration
	for _, e := range f.cur.entries {
		b64 := currentPart(e.blob)
		if b64 == "" {
			continue
		}
		blob, err := appendBlob(buf[:0], b64)
		var r vault.Record
		if err == nil {
			buf = blob
			r, err = f.k.Open(e.slot, blob)
		}
		if err := fn(e.slot, r.Meta, err); err != nil {
			return err
		}
	}
	return nil
}

// Records implements vault.Store.
func (f *Vault) Records(_ context.Context) ([]vault.Record, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.refreshIndexed(); err != nil {
		return nil, err
	}
	recs := make([]vault.Record, 0, len(f.cur.entries))
	for _, e := range f.cur.entries {
		if currentPart(e.blob) == "" {
			continue
		}
		r, err := f.openEntry(e)
		if err != nil {
			return nil, fmt.Errorf("vault %s: record %s: %w", f.path, e.slot, err)
		}
		recs = append(recs, r)
	}
	slices.SortFunc(recs, func(a, b vault.Record) int { return strings.Compare(a.Name, b.Name) })
	return recs, nil
}

// refreshIndexed rereads the vault if it changed and indexes its lines.
// Callers hold f.mu.
func (f *Vault) refreshIndexed() error {
	if err := f.refresh(); err != nil {
		return err
	}
	return f.index()
}

// openEntry decrypts the current record of one record line.
func (f *Vault) openEntry(e entry) (vault.Record, error) {
	blob, err := decodeBlob(currentPart(e.blob))
	if err != nil {
		return vault.Record{}, err
	}
	return f.k.Open(e.slot, blob)
}
