package deploy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/vault/fsio"
)

// write puts every rendered job where it goes, in order: stdout, or its
// file when the file does not already hold exactly that (a file that does
// keeps its mtime; its mode is set to the target's). With o.Check nothing
// is written. A write that fails stops the deploy there: the targets
// before it stay written, and the values of it and of those after it are
// withheld.
func write(jobs []*job, res []Result, read []ops.GetResult, src Source, o Options) error {
	done := 0 // values of the targets handled so far
	for i, j := range jobs {
		st, err := place(j, o)
		if err != nil {
			return withholdAll(src, read[done:], ops.Errorf(manifest.OpError, "%s: %v; the targets before it were written, it and those after it were not", label(j.t), err))
		}
		res[i].Status = st
		done += len(j.refs)
	}
	return nil
}

// place writes one job, or says what writing it would do.
func place(j *job, o Options) (Status, error) {
	if j.t.Out == Stdout {
		if o.Check {
			return WouldChange, nil
		}
		_, err := o.Stdout.Write(j.out)
		return Printed, err
	}
	same, err := holds(j.t.Out, j.out)
	switch {
	case err != nil:
		return 0, err
	case same && !o.Check:
		return Unchanged, os.Chmod(j.t.Out, j.t.Mode)
	case same:
		return Unchanged, nil
	case o.Check:
		return WouldChange, nil
	}
	return Written, replace(j.t.Out, j.out, j.t.Mode)
}

// holds reports whether the regular file at path holds exactly b; a file
// that does not exist does not. Only len(b)+1 bytes are ever read, and the
// open never blocks (a FIFO at path is refused, not waited on).
func holds(path string, b []byte) (bool, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return false, fmt.Errorf("%s is not a regular file", path)
	}
	have, err := io.ReadAll(io.LimitReader(f, int64(len(b))+1))
	if err != nil {
		return false, err
	}
	return bytes.Equal(have, b), nil
}

// replace writes b to path atomically (fsio.WriteWhole). The directory
// must exist.
func replace(path string, b []byte, mode fs.FileMode) error {
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("directory %s does not exist", dir)
	}
	return fsio.WriteWhole(path, b, mode)
}
