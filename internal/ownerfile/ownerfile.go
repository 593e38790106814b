// Package ownerfile reads a small file that holds a secret (a token, a
// passphrase): a regular file no one but its owner may read or write,
// bounded in size. Its errors never hold the file's bytes.
package ownerfile

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// Read returns the bytes of file: a regular file of mode 0600 or stricter
// (checked on the open file), of at most max bytes. Its errors say what is
// wrong, without the path (the caller names it) or any of its bytes.
func Read(file string, max int64) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, errors.New("is not a regular file")
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("has mode %04o: others than its owner may read or write it; make it 0600 (chmod 600)", perm)
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("is longer than %d bytes", max)
	}
	return b, nil
}
