package file

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/arca-secrets/arca/vault/fsio"
)

// A vault path may be a symlink: a vault kept in a synced folder, say. Then
// the vault is the file the link leads to, and every write goes there: the
// temp file is made beside that file, renamed over it and its directory
// synced, so the link stays a link and keeps leading to the vault. The
// writer lock sits beside that file too, so that processes that reach one
// vault by different paths (the link, the file itself, another link) take
// the same lock.

// target is the file the vault at path is: path itself, or the file a
// symlink at path leads to (through any chain of links). A link that leads
// nowhere is an error that says so; a path that does not exist at all is
// returned as it is, for the caller to create or report.
func target(path string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return path, nil
	}
	dest, err := filepath.EvalSymlinks(path)
	if err == nil {
		return dest, nil
	}
	if what, ok := fsio.Dangling(path); ok {
		return "", fmt.Errorf("vault path %s is %s", path, what)
	}
	to, _ := os.Readlink(path)
	return "", fmt.Errorf("vault path %s is a symlink to %s: %w", path, to, err)
}

// CheckPath reports a vault path that is a symlink leading nowhere, as
// creating or opening a vault there would: what arca init says before it
// makes anything. Any other path, one with nothing at it included, is nil.
func CheckPath(path string) error {
	_, err := target(path)
	return err
}

// lockTarget takes the writer lock of the vault at path, beside the file
// it is, and returns that file. A link moved to another file meanwhile is
// followed again.
func lockTarget(path string) (dest string, unlock func(), err error) {
	for range 3 {
		if dest, err = target(path); err != nil {
			return "", nil, err
		}
		if unlock, err = fsio.Lock(dest + ".lock"); err != nil {
			return "", nil, err
		}
		if again, err := target(path); err == nil && again == dest {
			return dest, unlock, nil
		}
		unlock()
	}
	return "", nil, fmt.Errorf("vault path %s keeps changing where it leads; try again", path)
}

// refreshAt is refreshByPath for a write holding dest's lock: the file read
// must be dest itself. Were the link moved to another file between the
// lock and the read, the write would put that file's records into dest.
func (f *Vault) refreshAt(dest string) error {
	if err := f.refreshByPath(); err != nil {
		return err
	}
	fi, err := os.Stat(dest)
	if err != nil || !os.SameFile(fi, f.heldInfo) {
		f.stale = true
		return fmt.Errorf("vault path %s changed where it leads while it was written; nothing was changed: try again", f.path)
	}
	return nil
}
