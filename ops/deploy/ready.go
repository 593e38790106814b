package deploy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// ready reports why t cannot be written, before anything is: its
// directory must exist, be a directory, and take a new file (a probe file
// is made there and removed, so a read-only or pseudo file system is
// found now, not after the targets before it were written); what is at its
// path now, if anything, must be a regular file arca may read and may
// replace (in a sticky directory, only its owner or the directory's may).
// Stdout is always ready.
func ready(t Target) error {
	if t.Out == Stdout {
		return nil
	}
	dir := filepath.Dir(t.Out)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("directory %s does not exist", dir)
	case err != nil:
		return fmt.Errorf("directory %s: %w", dir, err)
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	}
	if err := unix.Access(dir, unix.W_OK|unix.X_OK); err != nil {
		return fmt.Errorf("cannot create files in directory %s (%w)", dir, err)
	}
	if err := probe(dir, t.Out); err != nil {
		return err
	}
	cur, err := os.Stat(t.Out)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil // a new file, or a dangling link that the file replaces
	case err != nil:
		return err
	case !cur.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file", t.Out)
	}
	if err := unix.Access(t.Out, unix.R_OK); err != nil {
		return fmt.Errorf("cannot read %s (%w)", t.Out, err)
	}
	return replaceable(dir, fi, t.Out, uint32(os.Geteuid()))
}

// probe makes an empty file in dir, as the write will make its temp file
// there, and removes it.
func probe(dir, out string) error {
	f, err := os.CreateTemp(dir, "."+filepath.Base(out)+".arca-probe-*")
	if err != nil {
		return fmt.Errorf("cannot create files in directory %s (%w)", dir, unwrapPath(err))
	}
	name := f.Name()
	f.Close()
	if err := os.Remove(name); err != nil {
		return fmt.Errorf("cannot remove files in directory %s (%w)", dir, unwrapPath(err))
	}
	return nil
}

// replaceable reports whether a file of another user than uid, in a
// sticky directory of another user, stands at out: the rename that
// replaces it would be refused.
func replaceable(dir string, dirInfo fs.FileInfo, out string, uid uint32) error {
	if dirInfo.Mode()&fs.ModeSticky == 0 {
		return nil
	}
	ds, ok1 := dirInfo.Sys().(*syscall.Stat_t)
	li, err := os.Lstat(out)
	if err != nil || !ok1 {
		return nil
	}
	fsys, ok2 := li.Sys().(*syscall.Stat_t)
	if !ok2 || uid == 0 || fsys.Uid == uid || ds.Uid == uid {
		return nil
	}
	return fmt.Errorf("cannot replace %s: it belongs to another user, in a sticky directory (%s)", out, dir)
}

// unwrapPath is err without its path (the message names the directory).
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
