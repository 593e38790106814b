package fsio

import (
	"crypto/rand"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// WriteWhole makes path hold b with mode mode, whole or not at all: b goes
// to a temp file beside path (a name never there before, made with
// O_EXCL, so a link planted at it is not followed), which is synced,
// renamed over path and its directory synced. A failure before the rename
// leaves path as it was and removes the temp file.
func WriteWhole(path string, b []byte, mode fs.FileMode) error {
	var r [8]byte
	_, _ = rand.Read(r[:])
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".arca-"+hex.EncodeToString(r[:]))
	return writeVia(tmp, os.O_EXCL, path, b, mode)
}

// WriteWholeLocked is WriteWhole for a caller that holds a lock over
// path's writers: the temp file is path.tmp, so one a killed writer left
// is written over (never followed, if a link) by the next.
func WriteWholeLocked(path string, b []byte, mode fs.FileMode) error {
	return writeVia(path+".tmp", os.O_TRUNC|syscall.O_NOFOLLOW, path, b, mode)
}

func writeVia(tmp string, flags int, path string, b []byte, mode fs.FileMode) error {
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|flags, mode)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Chmod(mode) // the umask may have taken bits off
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return SyncDir(filepath.Dir(path))
}
