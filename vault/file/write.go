package file

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"filippo.io/age"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/internal/seal"
)

// Create makes an empty file vault at path (mode 0600, parent
// directories 0700) whose data key is wrapped to recipients. An existing
// vault is kept, never replaced; created reports which happened. When path
// is a symlink, the vault is made where it leads; a link that leads
// nowhere is an error.
func Create(path string, recipients []age.Recipient) (created bool, err error) {
	return create(path, recipients, defaultOptions())
}

func create(path string, recipients []age.Recipient, o options) (created bool, err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return false, fmt.Errorf("vault directory: %w", err)
	}
	dest, unlock, err := lockTarget(path)
	if err != nil {
		return false, err
	}
	defer unlock()
	switch fi, err := os.Stat(dest); {
	case err == nil && !fi.Mode().IsRegular():
		return false, fmt.Errorf("vault %s is not a regular file", dest)
	case err == nil:
		return false, nil // kept
	case !errors.Is(err, fs.ErrNotExist):
		return false, fmt.Errorf("vault %s: %w", path, err)
	}
	k, err := seal.Fresh()
	if err != nil {
		return false, err
	}
	var c contents
	if c.hdr, err = fileHeader(k, recipients); err != nil {
		return false, err
	}
	if err := o.fits(path, &c, nil, 0); err != nil {
		return false, err
	}
	return true, o.replace(dest, &c, nil)
}

// Apply implements vault.Store: a batch of one.
func (f *Vault) Apply(ctx context.Context, w vault.Write, approve vault.Approve) (vault.Meta, error) {
	ms, err := f.ApplyBatch(ctx, []vault.Write{w}, func(ms []vault.Meta) error { return approve(ms[0]) })
	if err != nil {
		return vault.Meta{}, err
	}
	return ms[0], nil
}

// ApplyBatch implements vault.Store: the whole batch is one unit, one
// rewrite of the file and one fsync. The writer lock is held from the read
// of the current records to the rename, so no concurrent write is lost.
func (f *Vault) ApplyBatch(_ context.Context, ws []vault.Write, approve vault.ApproveBatch) ([]vault.Meta, error) {
	if err := vault.CheckBatch(ws); err != nil {
		return nil, err
	}
	if len(ws) == 0 {
		return []vault.Meta{}, nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	dest, unlock, err := lockTarget(f.path)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := f.refreshAt(dest); err != nil {
		return nil, err
	}
	if err := f.index(); err != nil {
		return nil, err
	}
	metas, changes, err := f.prepare(ws)
	if err != nil {
		return nil, err
	}
	if err := f.opt.fits(f.path, &f.cur, changes, f.heldInfo.Size()); err != nil {
		return nil, err
	}
	if err := approve(metas); err != nil {
		return nil, err
	}
	if err := f.opt.replace(dest, &f.cur, changes); err != nil {
		return nil, err
	}
	// Renamed into place: the change is visible and the events stand. Any
	// doubt about what this handle now holds is settled by rereading.
	f.cur.apply(changes)
	if f.adopt() != nil {
		f.stale = true
	}
	return metas, nil
}

// prepare computes what each write makes of its record, all stamped with
// one time: the metadata to approve, in the order of ws, and the sealed
// record lines to write, sorted by slot.
func (f *Vault) prepare(ws []vault.Write) ([]vault.Meta, []entry, error) {
	now := f.now().UTC()
	metas, changes := make([]vault.Meta, 0, len(ws)), make([]entry, 0, len(ws))
	for _, w := range ws {
		slot := f.k.Slot(w.Name)
		cur, exists, err := f.lookup(slot, w.Name)
		if err != nil && !(w.Kind == vault.Remove && exists) {
			return nil, nil, err
		}
		next, err := vault.Next(w, cur, exists, now)
		if err != nil {
			return nil, nil, err
		}
		blob := ""
		if w.Kind != vault.Remove {
			sealed, err := f.k.Seal(slot, next)
			if err != nil {
				return nil, nil, err
			}
			blob = encodeBlob(sealed)
		}
		metas, changes = append(metas, next.Meta), append(changes, entry{slot, blob})
	}
	slices.SortFunc(changes, func(a, b entry) int { return strings.Compare(a.slot, b.slot) })
	return metas, changes, nil
}

// replace writes c, with changes applied, to path atomically: a temp
// file beside it, fsync, rename over path, fsync of the directory. path is
// the vault's target (never a symlink, which the rename would replace).
// The caller holds the writer lock, so the temp name is ours alone; a temp
// file a crashed writer left is removed rather than reused, so the new
// vault is always a fresh 0600 file.
func (o options) replace(path string, c *contents, changes []entry) error {
	tmp := path + ".tmp"
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("write vault: %w", err)
	}
	t, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("write vault: %w", err)
	}
	err = writeVault(t, c, changes)
	if err == nil {
		err = t.Sync()
	}
	if cerr := t.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write vault %s: %w", path, err)
	}
	// The rename is the commit. A failed directory sync cannot undo it, and
	// reporting the change as failed would contradict the vault; the next
	// write syncs the directory again.
	_ = o.syncDir(filepath.Dir(path))
	return nil
}
