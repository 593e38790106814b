package file

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/arca-secrets/arca/vault/internal/seal"
)

// The header's commits (seal.Header.Commits) mark the file's latest
// commits, oldest first: "<gen>-<id>", gen the generation the commit
// stamped (decimal, no leading zero) and id 16 random lowercase hex
// digits. Every commit appends its mark and keeps the newest maxCommits.
// A changes cursor carries the id of the commit at its generation, so a
// file put back from an older copy and written again up to that
// generation, by other commits, no longer matches it (history.go). The
// newest mark's gen is the highest generation of a line. The marks are in
// the clear and not under the header's MAC: whoever can write the file
// can put an older copy back anyway.
const (
	maxCommits  = 64
	commitIDHex = 16
)

// checkCommits accepts only marks a commit writes: each canonical, gens
// strictly increasing, at most maxCommits.
func checkCommits(cs []string) error {
	if len(cs) > maxCommits {
		return fmt.Errorf("vault header lists %d commits, more than %d", len(cs), maxCommits)
	}
	var prev uint64
	for i, c := range cs {
		gen, ok := parseCommit(c)
		if !ok || i > 0 && gen <= prev {
			return fmt.Errorf("vault header: malformed or out of order commit %d", i)
		}
		prev = gen
	}
	return nil
}

// parseCommit splits a mark into its gen; ok is false unless it is
// canonical.
func parseCommit(c string) (gen uint64, ok bool) {
	i := strings.IndexByte(c, '-')
	if i < 0 || !lowerHex(c[i+1:], commitIDHex) {
		return 0, false
	}
	return parseGen(c[:i])
}

// newestCommit is the gen of the newest mark of cs, which checkCommits
// has accepted; ok is false when there is none.
func newestCommit(cs []string) (uint64, bool) {
	if len(cs) == 0 {
		return 0, false
	}
	gen, _ := parseCommit(cs[len(cs)-1])
	return gen, true
}

// commitAt is the id of the commit at gen among cs (checked), scanning from
// the newest: a cursor at the file's generation finds it first.
func commitAt(cs []string, gen uint64) (string, bool) {
	var b [24]byte
	pre := append(strconv.AppendUint(b[:0], gen, 10), '-')
	for i := len(cs) - 1; i >= 0; i-- {
		if c := cs[i]; len(c) == len(pre)+commitIDHex && c[:len(pre)] == string(pre) {
			return c[len(pre):], true
		}
	}
	return "", false
}

// withCommit is h with the mark of a new commit at gen appended, the
// newest maxCommits kept. gen is above every gen h lists.
func withCommit(h header, gen uint64) (header, error) {
	var id [commitIDHex / 2]byte
	if _, err := rand.Read(id[:]); err != nil {
		return h, fmt.Errorf("commit id: %w", err)
	}
	cs := h.Commits
	if len(cs) >= maxCommits {
		cs = cs[len(cs)-maxCommits+1:]
	}
	h.Commits = append(append(make([]string, 0, len(cs)+1), cs...), strconv.FormatUint(gen, 10)+"-"+hex.EncodeToString(id[:]))
	return h, nil
}

// commitsSize is the bytes cs takes in the header's JSON,
// `,"commits":["…",…]`; nothing when empty.
func commitsSize(cs []string) int64 {
	if len(cs) == 0 {
		return 0
	}
	n := len(`,"commits":[]`) + len(cs) - 1
	for _, c := range cs {
		n += len(c) + len(`""`)
	}
	return int64(n)
}

// commitGrowth is how many bytes the mark of a commit at gen adds to cs
// in the header's JSON (commitsSize), less the oldest mark when cs is
// full.
func commitGrowth(cs []string, gen uint64) int64 {
	var b [20]byte
	mark := int64(len(strconv.AppendUint(b[:0], gen, 10)) + len(`"-"`) + commitIDHex)
	switch {
	case len(cs) == 0:
		return int64(len(`,"commits":[]`)) + mark
	case len(cs) >= maxCommits:
		return mark - int64(len(cs[0])+len(`""`))
	}
	return mark + int64(len(","))
}

// nextHeader is h as a commit at gen writes it: format arca-vault/2 (a
// vault that may hold history), its MAC made again over it, the commit's
// mark appended.
func nextHeader(k *seal.Keys, h header, gen uint64) (header, error) {
	h.Format, h.MAC = fileFormat, k.HeaderMAC(fileFormat, h.Recipients)
	return withCommit(h, gen)
}

// linesMark is the mark of a file with no commits (one no arca with
// commit marks has written: its lines carry no generation, or none past
// what it had then): the first 16 hex digits of the SHA-256 of its record
// lines as read, computed once per read of the file. Callers have read the
// lines (readLines).
func (c *contents) linesMark() string {
	if c.hash == "" {
		sum := sha256.Sum256([]byte(c.raw))
		c.hash = hex.EncodeToString(sum[:commitIDHex/2])
	}
	return c.hash
}

// markAt is the mark a cursor at gen carries on c: the id of the commit at
// gen, or, on a file with no commits, the hash of its lines at its own
// generation. ok is false when c has none for gen. Callers have indexed c.
func (c *contents) markAt(gen uint64) (string, bool) {
	if len(c.hdr.Commits) > 0 {
		return commitAt(c.hdr.Commits, gen)
	}
	if gen != c.gen {
		return "", false
	}
	return c.linesMark(), true
}
