package file

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"filippo.io/age"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/fsio"
	"github.com/arca-secrets/arca/vault/identity"
	"github.com/arca-secrets/arca/vault/internal/seal"
)

// Vault is the embedded file vault (kind "file"): one file, rewritten whole
// on every change by temp file, fsync, rename and directory fsync.
type Vault struct {
	path   string
	idPath string
	ids    []age.Identity
	now    func() time.Time

	mu       sync.Mutex
	held     *os.File    // the file cur was read from, kept open
	heldInfo fs.FileInfo // its stat when read
	seen     fileID      // what fstat said of it then
	stale    bool        // reread by path at the next refresh
	lookups  int         // gets since the last read of the file
	epoch    uint64      // the read epoch of the last check (vault.WithEpoch)
	cur      contents
	k        *seal.Keys
}

// fileID is what fstat says about the held file. Writers replace the vault
// by rename, which unlinks the file that was there: its link count drops.
// An edit in place changes its size or mtime.
type fileID struct {
	nlink uint64
	size  int64
	mtime int64
}

func fileIDOf(fi fs.FileInfo) fileID {
	id := fileID{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id.nlink = uint64(st.Nlink)
	}
	return id
}

// unchanged reports whether the held file is still the vault as read: an
// fstat, which costs a fraction of a stat by path.
func (f *Vault) unchanged() bool {
	var st syscall.Stat_t
	if syscall.Fstat(int(f.held.Fd()), &st) != nil {
		return false
	}
	return fileID{nlink: uint64(st.Nlink), size: st.Size, mtime: mtime(&st)} == f.seen
}

// Create makes an empty file vault at path (mode 0600, parent
// directories 0700) whose data key is wrapped to recipients. An existing
// vault is kept, never replaced; created reports which happened.
func Create(path string, recipients []age.Recipient) (created bool, err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return false, fmt.Errorf("vault directory: %w", err)
	}
	unlock, err := fsio.Lock(path + ".lock")
	if err != nil {
		return false, err
	}
	defer unlock()
	if _, err := os.Lstat(path); err == nil {
		return false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
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
	return true, replaceFile(path, &c, "", "")
}

// Open opens the file vault at path with the identities in identityPath.
// now stamps record times (time.Now when nil).
func Open(path, identityPath string, now func() time.Time) (*Vault, error) {
	ids, err := identity.Load(identityPath)
	if err != nil {
		return nil, err
	}
	if now == nil {
		now = time.Now
	}
	f := &Vault{path: path, idPath: identityPath, ids: ids, now: now}
	if err := f.refresh(); err != nil {
		return nil, err
	}
	return f, nil
}

// refresh rereads the vault if it changed since the last read; an fstat of
// the held file is all it costs otherwise. Callers hold f.mu.
//
// Every arca write replaces the vault by rename, so the held file is
// unlinked and its link count drops. Not noticed: moving the vault away by
// hand and putting another file in its place, which shows at the next write
// (it rereads under the lock) or a restart.
func (f *Vault) refresh() error {
	if !f.stale && f.k != nil && f.held != nil && f.unchanged() {
		return nil
	}
	fh, err := os.Open(f.path)
	if err != nil {
		return f.fail(err)
	}
	if err := f.load(fh); err != nil {
		fh.Close()
		return err
	}
	return nil
}

// refreshIn is refresh done at most once per read epoch (see vault.WithEpoch).
func (f *Vault) refreshIn(epoch uint64) error {
	if epoch != 0 && epoch == f.epoch && !f.stale && f.k != nil {
		return nil
	}
	if err := f.refresh(); err != nil {
		return err
	}
	f.epoch = epoch
	return nil
}

// refreshByPath is refresh that also notices a vault replaced by hand: a
// stat by path, for the rarer ops (writes, check) where it costs nothing.
func (f *Vault) refreshByPath() error {
	if f.held != nil {
		fi, err := os.Stat(f.path)
		if err != nil || !os.SameFile(fi, f.heldInfo) {
			f.stale = true
		}
	}
	return f.refresh()
}

// load reads and parses fh and, on success, makes it the held file.
func (f *Vault) load(fh *os.File) error {
	fi, err := fh.Stat()
	if err != nil {
		return f.fail(err)
	}
	if fi.Size() > maxVaultFile {
		return fmt.Errorf("vault %s is larger than %d bytes", f.path, maxVaultFile)
	}
	// A strings.Builder hands over what it read without copying it again.
	var buf strings.Builder
	buf.Grow(int(fi.Size()) + 1)
	if _, err := io.Copy(&buf, io.LimitReader(fh, maxVaultFile+1)); err != nil {
		return f.fail(err)
	}
	if buf.Len() > maxVaultFile {
		return fmt.Errorf("vault %s is larger than %d bytes", f.path, maxVaultFile)
	}
	c, err := parseVault(buf.String())
	if err != nil {
		return fmt.Errorf("vault %s is corrupt: %w", f.path, err)
	}
	k := f.k
	if k == nil || c.hdr.VaultID != f.cur.hdr.VaultID || !bytes.Equal(c.hdr.DataKey, f.cur.hdr.DataKey) {
		if k, err = f.unwrap(c.hdr); err != nil {
			return err
		}
	}
	// Checked on every load, not only with a fresh unwrap: a header whose
	// recipients or MAC changed under the same data key is still tampered.
	if k.HeaderMAC(c.hdr.Format, c.hdr.Recipients) != c.hdr.MAC {
		return fmt.Errorf("vault %s is corrupt: header fails to authenticate", f.path)
	}
	f.hold(fh, fi)
	f.cur, f.k = c, k
	return nil
}

func (f *Vault) hold(fh *os.File, fi fs.FileInfo) {
	if f.held != nil {
		f.held.Close()
	}
	f.held, f.heldInfo, f.seen, f.stale, f.lookups = fh, fi, fileIDOf(fi), false, 0
}

// adopt holds the file just written by this process under the writer lock,
// whose contents f.cur already mirrors.
func (f *Vault) adopt() error {
	fh, err := os.Open(f.path)
	if err != nil {
		return err
	}
	fi, err := fh.Stat()
	if err != nil {
		fh.Close()
		return err
	}
	f.hold(fh, fi)
	return nil
}

func (f *Vault) unwrap(h header) (*seal.Keys, error) {
	dataKey, err := seal.Unwrap(h.DataKey, f.ids)
	if err != nil {
		return nil, fmt.Errorf("vault %s: %w", f.path, err)
	}
	vaultID, _ := hex.DecodeString(h.VaultID)
	return seal.Derive(dataKey, vaultID)
}

func (f *Vault) fail(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("vault %s does not exist (run arca init)", f.path)
	}
	return fmt.Errorf("vault %s: %w", f.path, err)
}

// index indexes the record lines read, reporting a malformed one.
func (f *Vault) index() error {
	if err := f.cur.index(); err != nil {
		return fmt.Errorf("vault %s is corrupt: %w", f.path, err)
	}
	return nil
}

// lookup decrypts the record in slot. ok is false when there is none.
func (f *Vault) lookup(slot, name string) (r vault.Record, ok bool, err error) {
	b64, ok, err := f.cur.find(slot)
	if err != nil {
		return vault.Record{}, false, fmt.Errorf("vault %s is corrupt: %w", f.path, err)
	}
	if !ok {
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

// Get implements vault.Store.
func (f *Vault) Get(ctx context.Context, name string) (vault.Record, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.refreshIn(vault.EpochOf(ctx)); err != nil {
		return vault.Record{}, err
	}
	// The first lookup after a read searches the lines as they are; a handle
	// that looks up again is long-lived and indexes them all once.
	if f.lookups++; f.lookups > 1 {
		if err := f.index(); err != nil {
			return vault.Record{}, err
		}
	}
	r, ok, err := f.lookup(f.k.Slot(name), name)
	if err == nil && !ok {
		err = vault.ErrNotFound
	}
	return r, err
}

// List implements vault.Store.
func (f *Vault) List(_ context.Context) ([]vault.Meta, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.refresh(); err != nil {
		return nil, err
	}
	if err := f.index(); err != nil {
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

// eachMeta opens every record in file order and calls fn with its slot and
// metadata, or with the error that kept it from opening, until fn returns
// an error. Callers hold f.mu.
func (f *Vault) eachMeta(fn func(slot string, m vault.Meta, err error) error) error {
	var buf []byte // reused: only the metadata outlives an iteration
	for _, e := range f.cur.entries {
		blob, err := appendBlob(buf[:0], e.blob)
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

// Apply implements vault.Store. The writer lock is held from the read of the
// current record to the rename, so no concurrent write is lost.
func (f *Vault) Apply(_ context.Context, w vault.Write, approve vault.Approve) (vault.Meta, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	unlock, err := fsio.Lock(f.path + ".lock")
	if err != nil {
		return vault.Meta{}, err
	}
	defer unlock()
	if err := f.refreshByPath(); err != nil {
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
	if err := approve(next.Meta); err != nil {
		return vault.Meta{}, err
	}
	if err := replaceFile(f.path, &f.cur, slot, blob); err != nil {
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

// replaceFile writes c, with one slot changed, to path atomically: a temp
// file beside it, fsync, rename over path, fsync of the directory. The
// caller holds the writer lock, so the temp name is ours alone; a temp file
// a crashed writer left is removed rather than reused, so the new vault is
// always a fresh 0600 file.
func replaceFile(path string, c *contents, slot, blob string) error {
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
	_ = fsio.SyncDir(filepath.Dir(path))
	return nil
}

// Close implements vault.Store.
func (f *Vault) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.held != nil {
		f.held.Close()
		f.held, f.k = nil, nil
	}
	return nil
}
