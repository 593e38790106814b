package fsio

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// maxLinks bounds the links Dangling follows, as the kernel bounds a
// path's (a loop is not dangling: it is reported by whoever opens it).
const maxLinks = 40

// Dangling reports whether path is a symlink that leads, directly or
// through a chain of links, to nothing, and says so for a message: "a
// symlink to T, which does not exist", or "a symlink to T, a chain of links
// that ends at U, which does not exist". A path that is not a link, or a
// link that leads somewhere (or in a loop), is not dangling.
func Dangling(path string) (string, bool) {
	cur := path
	var first string
	for range maxLinks {
		fi, err := os.Lstat(cur)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return "", false
		}
		to, err := os.Readlink(cur)
		if err != nil {
			return "", false
		}
		if first == "" {
			first = to
		}
		next := to
		if !filepath.IsAbs(next) {
			next = filepath.Join(filepath.Dir(cur), next)
		}
		if _, err := os.Lstat(next); errors.Is(err, fs.ErrNotExist) {
			if cur == path {
				return "a symlink to " + to + ", which does not exist", true
			}
			return "a symlink to " + first + ", a chain of links that ends at " + to + ", which does not exist", true
		}
		cur = next
	}
	return "", false
}
