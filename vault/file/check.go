package file

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/identity"
)

// Check implements vault.Store: the vault opens and its key unwraps, every
// line authenticates, its current record and its history part both, and
// sits in the slot its name hashes to, and neither the vault, its
// directory nor the identity is open to other users. Soft-deleted names
// past keep_deleted are erased, in one write under the writer lock; a
// check that finds none writes nothing.
func (f *Vault) Check(_ context.Context) (vault.Report, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	rep := vault.Report{Problems: PermissionProblems(f.path, f.idPath)}
	if err := f.refreshByPath(); err != nil {
		rep.Problems = append(rep.Problems, err.Error())
		return rep, nil
	}
	if err := f.index(); err != nil {
		rep.Problems = append(rep.Problems, err.Error())
		return rep, nil
	}
	now := f.now().UTC()
	expired, gone := f.checkLines(&rep, now)
	if len(expired) > 0 {
		n, err := f.eraseExpired(expired, now)
		if err != nil {
			rep.Problems = append(rep.Problems, err.Error())
		} else if n == len(expired) {
			rep.Versions -= gone // the report is of the vault the check leaves
		}
		rep.Erased = n
	}
	return rep, nil
}

// checkLines opens every line into rep and returns the soft-deleted names
// past keep_deleted at now (their slots, sorted) and how many earlier
// versions they hold. Callers hold f.mu and have indexed the lines.
func (f *Vault) checkLines(rep *vault.Report, now time.Time) (expired []change, gone int) {
	for _, e := range f.cur.entries {
		if currentPart(e.blob) != "" {
			rep.Records++
		}
		c, err := openChain(f.k, e.slot, e.blob)
		switch {
		case err != nil:
			rep.Problems = append(rep.Problems, fmt.Sprintf("record %s: %v", e.slot, err))
			continue
		case f.k.Slot(c.Name) != e.slot:
			rep.Problems = append(rep.Problems, fmt.Sprintf("record %s: stored in the wrong slot", e.slot))
			continue
		}
		rep.Versions += len(c.Previous)
		if expires(c, f.hist, now) {
			expired = append(expired, change{slot: f.k.SlotBytes(c.Name), i: int32(len(expired))})
			gone += len(c.Previous)
		}
	}
	return expired, gone
}

// expires reports whether c is soft-deleted past keep_deleted at now.
func expires(c vault.Chain, h vault.History, now time.Time) bool {
	if !c.Deleted() {
		return false
	}
	x, _ := vault.Expire(c, h, now)
	return !x.Deleted()
}

// eraseExpired erases the versions of the soft-deleted names in slots
// (sorted by slot) that are past keep_deleted, as the vault stands under
// the writer lock, in one write, and returns how many names it erased.
// Callers hold f.mu.
func (f *Vault) eraseExpired(slots []change, now time.Time) (int, error) {
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
	// Every line stays (only its versions go): the file changes by the
	// lengths of the lines rewritten.
	gen := f.cur.gen + 1
	hdr, err := nextHeader(f.k, f.cur.hdr, gen)
	if err != nil {
		return 0, err
	}
	size := f.heldSize() + f.headerGrowth(gen)
	changes := slots[:0]
	for _, ch := range slots {
		slot := changeSlot(&ch)
		if c, old, ok := f.expired(slot, now); ok {
			size += chainLine(c, gen) - lineSize(old)
			changes = append(changes, ch)
		}
	}
	if len(changes) == 0 {
		return 0, nil
	}
	err = f.rewriteWith(dest, hdr, size, gen, changes, func(dst, raw []byte, _ change, slot string) ([]byte, []byte, error) {
		c, _, _ := f.expired(slot, now)
		return appendChainBlob(f.k, dst, raw, slot, c, gen)
	})
	if err != nil {
		return 0, err
	}
	return len(changes), nil
}

// expired is the chain in slot with its versions erased, and the length
// of the line that holds it now, if it is soft-deleted past keep_deleted
// at now. Callers hold f.mu.
func (f *Vault) expired(slot string, now time.Time) (vault.Chain, int, bool) {
	b64, ok, err := f.cur.find(slot)
	if err != nil || !ok {
		return vault.Chain{}, 0, false
	}
	c, err := openChain(f.k, slot, b64)
	if err != nil || !expires(c, f.hist, now) {
		return vault.Chain{}, 0, false
	}
	c, _ = vault.Expire(c, f.hist, now)
	return c, len(b64), true
}

// PermissionProblems reports a file vault, its directory or its identity
// that other users can read; a missing file is not reported. For a vault
// path that is a symlink, the directory is the one the vault file is in.
func PermissionProblems(vaultPath, idPath string) []string {
	var out []string
	dir := filepath.Dir(vaultPath)
	if dest, err := target(vaultPath); err == nil {
		dir = filepath.Dir(dest)
	}
	for _, p := range []struct{ what, path string }{
		{"vault", vaultPath},
		{"vault directory", dir},
		{"identity", idPath},
	} {
		fi, err := os.Stat(p.path)
		if err != nil || p.path == identity.KeyPath {
			continue // a missing vault or identity is reported by opening it
		}
		if mode := fi.Mode().Perm(); mode&0o077 != 0 {
			out = append(out, fmt.Sprintf("%s %s is readable by other users (mode %04o): chmod go-rwx %s", p.what, p.path, mode, p.path))
		}
	}
	return out
}
