package file

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
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
	opt    options

	mu       sync.Mutex
	held     *os.File    // the file cur was read from, kept open
	heldInfo fs.FileInfo // its stat when read
	seen     fileID      // what fstat said of it then
	stale    bool        // reread by path at the next refresh
	lookups  int         // gets since the last read of the file
	epoch    uint64      // the read epoch of the last check (vault.WithEpoch)
	hist     vault.History
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
	id, ok := f.fstat()
	return ok && id == f.seen
}

// sameBytes reports whether the held file still has the size and
// modification time it had when read: an edit in place changes them, while
// a write that replaces the vault by rename leaves the held file's bytes as
// they were (only its link count drops).
func (f *Vault) sameBytes() bool {
	id, ok := f.fstat()
	return ok && id.size == f.seen.size && id.mtime == f.seen.mtime
}

func (f *Vault) fstat() (fileID, bool) {
	var st syscall.Stat_t
	if syscall.Fstat(int(f.held.Fd()), &st) != nil {
		return fileID{}, false
	}
	return fileID{nlink: uint64(st.Nlink), size: st.Size, mtime: mtime(&st)}, true
}

// Open opens the file vault at path with the identities in identityPath.
// now stamps record times (time.Now when nil).
func Open(path, identityPath string, now func() time.Time) (*Vault, error) {
	return open(path, identityPath, now, defaultOptions())
}

// OpenKeys is Open with the identity file loaded through keys: a
// protected one opened once per process, or $ARCA_IDENTITY_KEY.
func OpenKeys(path, identityPath string, keys *identity.Keys, now func() time.Time) (*Vault, error) {
	o := defaultOptions()
	o.keys = keys
	return open(path, identityPath, now, o)
}

// open is Open with the bounds of o.
func open(path, identityPath string, now func() time.Time, o options) (*Vault, error) {
	ids, err := o.keys.Load(identityPath)
	if err != nil {
		return nil, err
	}
	if now == nil {
		now = time.Now
	}
	f := &Vault{path: path, idPath: identityPath, ids: ids, now: now, opt: o, hist: vault.DefaultHistory()}
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
	if fi.Size() > f.opt.maxRead {
		return f.tooLarge()
	}
	c, err := f.read(fh, fi.Size())
	if err != nil {
		return err
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

// read reads the vault file fh of size bytes: whole, or, when it is large,
// by pages, its header and trailer now and its record lines as a get
// touches them (pages.go).
func (f *Vault) read(fh *os.File, size int64) (contents, error) {
	if o := f.opt.paged; o.from > 0 && size >= o.from {
		if c, ok := readFrame(newPages(fh, int(size), o.pageSize, o.budget)); ok {
			return c, nil
		}
	}
	data, err := fsio.ReadString(fh, f.opt.maxRead, size)
	if errors.Is(err, fsio.ErrTooLarge) {
		return contents{}, f.tooLarge()
	} else if err != nil {
		return contents{}, f.fail(err)
	}
	c, err := parseVault(data)
	if err != nil {
		return contents{}, fmt.Errorf("vault %s is corrupt: %w", f.path, err)
	}
	return c, nil
}

// readLines reads the record lines the open left unread (see read), for an
// op that needs them all, from the held file: the vault as it was at the
// open, even if a write has replaced it since. A file edited in place
// meanwhile is an error, and the next op reads the vault again. Callers
// hold f.mu.
func (f *Vault) readLines() error {
	p := f.cur.unread
	if p == nil {
		return nil
	}
	n := int64(p.n)
	raw, err := fsio.ReadString(io.NewSectionReader(f.held, int64(p.base), n), n, n)
	if err == nil && len(raw) == p.n && (raw == "" || raw[len(raw)-1] == '\n') && f.sameBytes() {
		f.cur.raw, f.cur.unread = raw, nil
		return nil
	}
	f.stale = true
	if err != nil {
		return f.fail(err)
	}
	return fmt.Errorf("vault %s changed while it was read (edited in place; arca writes replace it whole): try again", f.path)
}

// tooLarge is the error of a vault over the read bound, which no arca
// write makes (see maxVaultFile).
func (f *Vault) tooLarge() error {
	return fmt.Errorf("vault %s is larger than the %d bytes arca reads", f.path, f.opt.maxRead)
}

// hold makes fh, of stat fi, the file the handle reads from.
//
// A file already unlinked when it was stat'ed was replaced between the
// open and the stat: its link count stays 0, so fstat would call it
// unchanged for good. It is held stale, and the next op reads by path.
func (f *Vault) hold(fh *os.File, fi fs.FileInfo) {
	if f.held != nil {
		f.held.Close()
	}
	id := fileIDOf(fi)
	f.held, f.heldInfo, f.seen, f.stale, f.lookups = fh, fi, id, id.nlink == 0, 0
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
	k, err := h.Keys(f.ids)
	if err != nil {
		return nil, fmt.Errorf("vault %s: %w", f.path, err)
	}
	return k, nil
}

func (f *Vault) fail(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		if _, terr := target(f.path); terr != nil {
			return terr // a symlink that leads nowhere
		}
		return fmt.Errorf("vault %s does not exist (run arca init)", f.path)
	}
	return fmt.Errorf("vault %s: %w", f.path, err)
}

// index indexes the record lines read, reporting a malformed one.
func (f *Vault) index() error {
	if err := f.readLines(); err != nil {
		return err
	}
	if err := f.cur.index(); err != nil {
		return fmt.Errorf("vault %s is corrupt: %w", f.path, err)
	}
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
