package file

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

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
	if err := o.fits(path, &c, "", "", 0); err != nil {
		return false, err
	}
	return true, o.replace(dest, &c, "", "")
}

// Apply implements vault.Store. The writer lock is held from the read of the
// current record to the rename, so no concurrent write is lost.
func (f *Vault) Apply(_ context.Context, w vault.Write, approve vault.Approve) (vault.Meta, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	dest, unlock, err := lockTarget(f.path)
	if err != nil {
		return vault.Meta{}, err
	}
	defer unlock()
	if err := f.refreshAt(dest); err != nil {
		return vault.Meta{}, err
	}
	if err := f.index(); err != nil {
		return vault.Meta{}, err
	}
	slot := f.k.Slot(w.Name)
	cur, exists, err := f.lookup(slot, w.Name)
	if err != nil && !(w.Kind == vault.Remove && exists) {
		return vault.Meta{}, err
	}
	next, err := vault.Next(w, cur, exists, f.now().UTC())
	if err != nil {
		return vault.Meta{}, err
	}
	blob := ""
	if w.Kind != vault.Remove {
		sealed, err := f.k.Seal(slot, next)
		if err != nil {
			return vault.Meta{}, err
		}
		blob = encodeBlob(sealed)
	}
	if err := f.opt.fits(f.path, &f.cur, slot, blob, f.heldInfo.Size()); err != nil {
		return vault.Meta{}, err
	}
	if err := approve(next.Meta); err != nil {
		return vault.Meta{}, err
	}
	if err := f.opt.replace(dest, &f.cur, slot, blob); err != nil {
		return vault.Meta{}, err
	}
	// Renamed into place: the change is visible and the event stands. Any
	// doubt about what this handle now holds is settled by rereading.
	f.cur.set(slot, blob)
	if f.adopt() != nil {
		f.stale = true
	}
	return next.Meta, nil
}

// replace writes c, with one slot changed, to path atomically: a temp
// file beside it, fsync, rename over path, fsync of the directory. path is
// the vault's target (never a symlink, which the rename would replace).
// The caller holds the writer lock, so the temp name is ours alone; a temp
// file a crashed writer left is removed rather than reused, so the new
// vault is always a fresh 0600 file.
func (o options) replace(path string, c *contents, slot, blob string) error {
	tmp := path + ".tmp"
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("write vault: %w", err)
	}
	t, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("write vault: %w", err)
	}
	err = writeVault(t, c, slot, blob)
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
