package file

import (
	"encoding/json"
	"fmt"

	"github.com/arca-secrets/arca/vault/fsio"
)

// A vault file is read whole, so its size is bounded, and no write may
// make a vault that a read refuses: a write that would take the file past
// maxVaultFile is refused before it is approved, and nothing changes.
// Reads accept maxVaultSlack more than that, which is more than any one
// write adds (a record line is under 90 KiB, a header under 256 KiB), and a
// write that does not grow the file is never refused. So a vault that is
// already past maxVaultFile (one an earlier arca let grow, or one copied
// together by hand) still opens, and rm, or a smaller value, shrinks it.
const (
	maxVaultFile  = 1 << 30
	maxVaultSlack = 1 << 20
)

// options are what a handle's reads and writes are bounded by, and the
// directory sync its writes end with. Open uses defaultOptions; tests lower
// the bounds to reach them cheaply, and watch the syncs.
type options struct {
	maxRead  int64 // a larger file is refused on read
	maxWrite int64 // a write may grow the file to at most this
	syncDir  func(dir string) error
}

func defaultOptions() options {
	return options{maxRead: maxVaultFile + maxVaultSlack, maxWrite: maxVaultFile, syncDir: fsio.SyncDir}
}

// fits reports an error when writing c with changes applied would take
// the vault at path past o.maxWrite and past old, the size of the file it
// replaces.
func (o options) fits(path string, c *contents, changes []entry, old int64) error {
	size, err := sizeOf(c, changes)
	if err != nil {
		return err
	}
	if size > o.maxWrite && size > old {
		return fmt.Errorf("vault %s would grow to %d bytes, over its limit of %d bytes; nothing was changed (rm records to make room)", path, size, o.maxWrite)
	}
	return nil
}

// sizeOf is the size of the file writeVault makes of c with changes
// applied: the header line, every record line with the comma between two
// of them, the trailer.
func sizeOf(c *contents, changes []entry) (int64, error) {
	hb, err := json.Marshal(c.hdr)
	if err != nil {
		return 0, err
	}
	size := int64(len(linePrefix) + len(hb) + len(lineSuffix) + len("\n"+fileTrailer))
	n := 0
	c.merged(changes, func(_, b string) {
		n++
		size += int64(len("\n\"") + slotHexSize + len(`":"`) + len(b) + len(`"`))
	})
	if n > 1 {
		size += int64(n - 1) // the commas
	}
	return size, nil
}
