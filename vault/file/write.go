package file

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

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
	// The empty vault's commit, at generation 0: a cursor given on it
	// holds through the first write.
	if c.hdr, err = withCommit(c.hdr, 0); err != nil {
		return false, err
	}
	return true, o.replace(dest, path, &c, 0)
}

// replace writes c as the vault at dest, the target of the vault named
// path, in place of a file of old bytes: writeTemp, then commit.
func (o options) replace(dest, path string, c *contents, old int64) error {
	tmp, err := o.writeTemp(dest, o.bound(old), func(w io.Writer) error {
		_, err := writeVault(w, c, nil, 0, nil)
		return err
	})
	if errors.Is(err, errTooLarge) {
		return o.tooLargeWrite(path)
	} else if err != nil {
		return err
	}
	return o.commit(tmp, dest)
}

// Apply implements vault.Store: a batch of one.
func (f *Vault) Apply(ctx context.Context, w vault.Write, approve vault.Approve) (vault.Meta, error) {
	var m vault.Meta
	_, err := f.ApplyBatch(ctx, vault.Writes{w}, func(ms []vault.Meta) error {
		m = ms[0]
		return approve(m)
	})
	if err != nil {
		return vault.Meta{}, err
	}
	return m, nil
}

// approveRun is how many writes' metadata approve is shown at a time.
const approveRun = 1024

// keepMax is the largest batch whose written lines the handle keeps, to
// update what it holds in place (a put, a small batch). After a larger
// batch the handle rereads the file at its next read: holding every sealed
// record of a migration until its commit would take several times the
// memory of its input.
const keepMax = 64

// ApplyBatch implements vault.Store: the whole batch is one unit, one
// rewrite of the file and one fsync. The writer lock is held from the read
// of the current records to the rename, so no concurrent write is lost.
//
// Every write is first worked out (vault.Step) and the size of the new
// file computed, so a batch that fails or would grow the file past its
// limit is refused unapproved; then approve sees every write's metadata,
// in runs; then the new file is written, each name's line sealed as the
// merge reaches its slot and nothing of it kept, synced and renamed into
// place. Each pass works its writes out again from the lines as read
// (vault.Step is pure), so memory is a slot per write beside the vault's
// own records, whatever the size of the batch. Every line written is
// stamped with the next generation, and the header with format
// arca-vault/2.
func (f *Vault) ApplyBatch(_ context.Context, b vault.Batch, approve vault.ApproveBatch) (int, error) {
	n := b.Len()
	if n == 0 {
		return 0, nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	dest, unlock, err := lockTarget(f.path)
	if err != nil {
		return 0, err
	}
	defer unlock()
	if err := f.refreshAt(dest); err != nil {
		return 0, err
	}
	if err := f.index(); err != nil {
		return 0, err
	}
	changes, err := f.changes(b)
	if err != nil {
		return 0, err
	}
	now, gen := f.now().UTC(), f.cur.gen+1
	hdr, err := nextHeader(f.k, f.cur.hdr, gen)
	if err != nil {
		return 0, err
	}
	size, err := f.sizeWith(b, changes, now, gen)
	if err != nil {
		return 0, err
	}
	if size > f.writeBound(gen) {
		return 0, f.opt.tooLargeWrite(f.path)
	}
	if err := f.approveAll(b, now, approve); err != nil {
		return 0, err
	}
	err = f.rewriteWith(dest, hdr, size, gen, changes, func(dst, raw []byte, ch change, slot string) ([]byte, []byte, error) {
		return f.sealed(dst, raw, b.At(int(ch.i)), slot, now, gen)
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// sealFunc appends to dst the blob of the line a change leaves in slot,
// sealing into raw; nothing when the change drops the line. Both are
// returned for reuse.
type sealFunc func(dst, raw []byte, ch change, slot string) ([]byte, []byte, error)

// rewriteWith writes the vault with changes (sorted by slot, each sealed by
// seal as the merge reaches it, at generation gen) to a new file of size
// bytes beside dest, under hdr (nextHeader: the header with the commit's
// mark), syncs it and renames it into place, then brings the handle up to date:
// a small change is applied to what it holds, a larger one makes it
// reread at its next read, and so does a write that copied more of the
// records line by line than looseMax allows. Callers hold f.mu and the
// writer lock.
func (f *Vault) rewriteWith(dest string, hdr header, size int64, gen uint64, changes []change, seal sealFunc) error {
	n := len(changes)
	c := f.cur
	c.hdr = hdr
	var kept []entry // a small change's lines, for the handle
	var buf, raw []byte
	var loose int
	tmp, err := f.opt.writeTemp(dest, f.writeBound(gen), func(w io.Writer) (err error) {
		loose, err = writeVault(w, &c, changes, size, func(ch change, slot string) ([]byte, error) {
			var err error
			buf, raw, err = seal(buf[:0], raw[:0], ch, slot)
			if err == nil && n <= keepMax {
				kept = append(kept, entry{slot: slot, blob: string(buf)})
			}
			if len(buf) == 0 {
				return nil, err // dropped
			}
			return buf, err
		})
		return err
	})
	if errors.Is(err, errTooLarge) {
		return f.opt.tooLargeWrite(f.path)
	} else if err != nil {
		return err
	}
	if err := f.opt.commit(tmp, dest); err != nil {
		return err
	}
	// Renamed into place: the change is visible and the events stand. Any
	// doubt about what this handle now holds is settled by rereading.
	f.cur.hdr, f.cur.gen, f.cur.hash = c.hdr, gen, ""
	if n > keepMax || loose > looseMax(len(f.cur.entries)) {
		f.stale = true
		return nil
	}
	f.cur.apply(kept)
	if f.adopt() != nil {
		f.stale = true
	}
	return nil
}

// looseMax is how many records of a vault of n a write may copy line by
// line before the handle rereads the file. A handle keeps a record it
// wrote as a line of its own, which the next write copies alone, where it
// writes the records as read in spans of the file's lines, a copy each
// (lineWriter.entries); after many writes to different records a write
// would copy most of them line by line. Past a sixteenth of the records
// (and past keepMax, so a small vault never rereads for this) the handle
// rereads the file at its next read, whose lines are all one span again:
// one read of the file every n/16 or so writes, against a write of the
// file every time.
func looseMax(n int) int { return max(keepMax, n/16) }

// changes is the slot of every write of b, sorted by slot. Two writes of
// one record share a slot: such a batch is refused.
func (f *Vault) changes(b vault.Batch) ([]change, error) {
	cs := make([]change, b.Len())
	for i := range cs {
		cs[i] = change{f.k.SlotBytes(b.At(i).Name), int32(i)}
	}
	slices.SortFunc(cs, func(a, b change) int { return bytes.Compare(a.slot[:], b.slot[:]) })
	for j := 1; j < len(cs); j++ {
		if cs[j].slot == cs[j-1].slot {
			return nil, vault.TwiceError(int(cs[j-1].i), int(cs[j].i))
		}
	}
	return cs, nil
}

// sizeWith is the size of the file writeVault makes of the vault with
// the writes of b applied (changes their slots, sorted) at generation gen:
// the size of the file as it stands, less the record line of every name a
// write changes, plus the line each write leaves, a comma between two
// lines, and the commit's mark in the header. Each write is worked out on the way, so one that fails fails
// here. The records no write names are not visited.
func (f *Vault) sizeWith(b vault.Batch, changes []change, now time.Time, gen uint64) (int64, error) {
	size, lines := f.heldSize(), len(f.cur.entries)
	commas := func(lines int) int64 { return int64(max(lines-1, 0)) }
	size -= commas(lines)
	var err error
	mergeSlots(f.cur.entries, changes, changeSlot, func([]entry) {}, func(ch *change, slot string, old *entry) {
		if err != nil {
			return
		}
		if old != nil {
			size -= lineSize(len(old.blob))
			lines--
		}
		next, _, serr := f.step(b.At(int(ch.i)), slot, now)
		if err = serr; err == nil {
			size += chainLine(next, gen)
			lines++
		}
	})
	return size + commas(lines) + f.headerGrowth(gen), err
}

// headerGrowth is how many bytes longer the header a commit at gen writes
// (nextHeader) is than the one the handle holds: the commit's mark, less
// an old one dropped. Format and MAC keep their lengths, and every mark's
// id has one.
func (f *Vault) headerGrowth(gen uint64) int64 {
	return commitGrowth(f.cur.hdr.Commits, gen)
}

// writeBound is the most a commit at gen may make of the file the handle
// holds: its bound (options.bound) with the commit's mark in its header.
func (f *Vault) writeBound(gen uint64) int64 {
	return f.opt.bound(f.heldSize() + f.headerGrowth(gen))
}

// heldSize is the size of the vault file as the handle holds it: the size
// of the held file, which f.cur mirrors (read from it, or written as it
// and then held), and whose every byte the canonical layout fixes. Callers
// hold f.mu and have refreshed the handle.
func (f *Vault) heldSize() int64 { return f.heldInfo.Size() }

// step is what w makes of the name in slot at now (stepLine). Step is
// pure, so the passes of a write each work it out again rather than hold
// what it made.
func (f *Vault) step(w vault.Write, slot string, now time.Time) (vault.Chain, vault.Meta, error) {
	c, exists, err := f.lookupChain(slot, w.Name)
	return stepLine(w, c, exists, err, f.hist, now)
}

// sealed appends to dst the blob of the line w leaves in slot at
// generation gen (sealing into raw, which it returns for reuse).
func (f *Vault) sealed(dst, raw []byte, w vault.Write, slot string, now time.Time, gen uint64) ([]byte, []byte, error) {
	next, _, err := f.step(w, slot, now)
	if err != nil {
		return dst, raw, err
	}
	return appendChainBlob(f.k, dst, raw, slot, next, gen)
}

// approveAll shows approve the metadata every write of b leaves, in the
// order of b, in runs of at most approveRun.
func (f *Vault) approveAll(b vault.Batch, now time.Time, approve vault.ApproveBatch) error {
	n := b.Len()
	run := make([]vault.Meta, 0, min(n, approveRun))
	for i := range n {
		w := b.At(i)
		id := f.k.SlotBytes(w.Name)
		h := (&change{slot: id}).hexSlot()
		_, m, err := f.step(w, string(h[:]), now)
		if err != nil {
			return err
		}
		if run = append(run, m); len(run) == cap(run) || i == n-1 {
			if err := approve(run); err != nil {
				return err
			}
			run = run[:0]
		}
	}
	return nil
}

// writeTemp writes a new vault file beside path with body, of at most limit
// bytes (options.bound; past it, errTooLarge) and synced, and returns its name:
// what commit puts in place. The caller holds the writer lock, so the
// temp name is ours alone; a temp file a crashed writer left is removed
// rather than reused, so the new vault is always a fresh 0600 file.
func (o options) writeTemp(path string, limit int64, body func(io.Writer) error) (string, error) {
	tmp := path + ".tmp"
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("write vault: %w", err)
	}
	t, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("write vault: %w", err)
	}
	err = body(&limitWriter{w: t, left: limit})
	if err == nil && o.syncFile != nil {
		err = o.syncFile(t)
	} else if err == nil {
		err = t.Sync()
	}
	if cerr := t.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		if errors.Is(err, errTooLarge) {
			return "", err
		}
		return "", fmt.Errorf("write vault %s: %w", path, err)
	}
	return tmp, nil
}

// commit renames tmp over path, the vault's target (never a symlink,
// which the rename would replace), and syncs the directory.
func (o options) commit(tmp, path string) error {
	rename := o.rename
	if rename == nil {
		rename = os.Rename
	}
	if err := rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write vault %s: %w", path, err)
	}
	// The rename is the commit. A failed directory sync cannot undo it, and
	// reporting the change as failed would contradict the vault; the next
	// write syncs the directory again.
	_ = o.syncDir(filepath.Dir(path))
	return nil
}
