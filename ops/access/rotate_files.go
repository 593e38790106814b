package access

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/arca-secrets/arca/vault/fsio"
	"github.com/arca-secrets/arca/vault/identity"
)

// The files of an identity rotation: its journal, and the identity files
// it reads and writes whole.

// journal is what PATH.rotation notes: the rotation from the old key to
// the new, and the vaults re-keyed in its step 4.
type journal struct {
	oldKey, newKey string
	done           []string
}

// journalHead is the first line of the journal.
const journalHead = "# arca identity rotation: the vaults re-keyed from %s to %s"

// text is the journal, done the vaults re-keyed.
func (j journal) text(done []string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, journalHead+"\n", j.oldKey, j.newKey)
	for _, n := range done {
		b.WriteString(strconv.Quote(n) + "\n")
	}
	return []byte(b.String())
}

// readJournal reads the journal, and reports whether it is that of a
// rotation to the identity r.id holds: one in its step 4, or at its end.
func (r *rotation) readJournal() (journal, bool) {
	b, err := fsio.ReadFile(r.journal, 1<<20)
	if err != nil {
		return journal{}, false
	}
	var j journal
	head, rest, _ := strings.Cut(string(b), "\n")
	if _, err := fmt.Sscanf(head, journalHead, &j.oldKey, &j.newKey); err != nil || head+"\n" != string(j.text(nil)) {
		return journal{}, false
	}
	if key, err := publicKey(r.id); err != nil || key != j.newKey || j.oldKey == j.newKey {
		return journal{}, false
	}
	for _, l := range strings.Split(rest, "\n") {
		if n, err := strconv.Unquote(l); err == nil {
			j.done = append(j.done, n)
		}
	}
	return j, true
}

// publicKey is the public key of the identity in the file at path.
func publicKey(path string) (string, error) {
	ids, err := identity.Load(path, nil)
	if err != nil {
		return "", err
	}
	rs := identity.RecipientsOf(ids)
	if len(rs) == 0 {
		return "", fmt.Errorf("identity file %s holds no age X25519 identity", path)
	}
	return fmt.Sprint(rs[0]), nil
}

// exists reports whether something is at path.
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// writeFile makes path hold b (mode 0600), whole or not at all
// (fsio.WriteWholeLocked: the caller holds the rotation's lock).
func writeFile(path string, b []byte) error {
	if err := fsio.WriteWholeLocked(path, b, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
