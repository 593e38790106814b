package file

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/internal/seal"
)

// Group implements vault.Store: the handle's lock and the writer lock are
// held from here to the group's Commit or Abort, so the group's writes are
// prepared against the records as they stand and no concurrent write is
// lost; the group is then one rewrite of the file and one fsync.
// Both locks are let go of if the group does not start, a panic included.
func (f *Vault) Group(context.Context) (vault.Group, error) {
	f.mu.Lock()
	started := false
	defer func() {
		if !started {
			f.mu.Unlock()
		}
	}()
	dest, unlockTarget, err := lockTarget(f.path)
	if err != nil {
		return nil, err
	}
	defer func() {
		if !started {
			unlockTarget()
		}
	}()
	g := &group{f: f, dest: dest, unlock: unlockTarget, bySlot: map[[seal.SlotSize]byte]int{}}
	if err := g.start(); err != nil {
		return nil, err
	}
	started = true
	return g, nil
}

// group is a vault.Group of the file vault: the change every kept write
// leaves, one per record (a later write of a record replaces what an
// earlier one left), and the size of the file they make, kept as each
// write is added so that one that would take the file past its bound is
// refused alone, before it is approved.
type group struct {
	f      *Vault
	dest   string // the vault's target, locked
	unlock func()
	ended  bool

	gen    uint64 // the generation the commit stamps
	hdr    header // the header it writes, with its mark (nextHeader)
	fixed  int64  // the header line and the trailer
	body   int64  // every record line as the group leaves it
	lines  int
	recs   []groupRec
	bySlot map[[seal.SlotSize]byte]int // index in recs
}

// groupRec is what the group leaves in one slot.
type groupRec struct {
	slot  [seal.SlotSize]byte
	chain vault.Chain // the name's chain
}

// start reads the vault as it stands under the lock and sizes its file.
func (g *group) start() error {
	f := g.f
	if err := f.refreshAt(g.dest); err != nil {
		return err
	}
	if err := f.index(); err != nil {
		return err
	}
	g.gen = f.cur.gen + 1
	hdr, err := nextHeader(f.k, f.cur.hdr, g.gen)
	if err != nil {
		return err
	}
	hb, err := json.Marshal(hdr)
	if err != nil {
		return err
	}
	g.hdr = hdr
	g.fixed = int64(len(linePrefix) + len(hb) + len(lineSuffix) + len("\n"+fileTrailer))
	g.lines = len(f.cur.entries)
	// Every record line, not visited: the held file less its header, which
	// the commit's mark makes longer.
	g.body = f.heldSize() + f.headerGrowth(g.gen) - g.size(0, g.lines)
	return nil
}

// lineSize is the bytes of a record line whose blob is blob bytes of
// base64, with the newline before it (the comma after it is counted apart).
func lineSize(blob int) int64 {
	return int64(len("\n\"") + slotHexSize + len(`":"`) + blob + len(`"`))
}

// size is the file's size with body and lines.
func (g *group) size(body int64, lines int) int64 {
	return g.fixed + body + int64(max(lines-1, 0))
}

var errGroupEnded = errors.New("the group of writes has ended")

// Add implements vault.Group.
func (g *group) Add(_ context.Context, w vault.Write, approve vault.Approve) (vault.Meta, error) {
	if g.ended {
		return vault.Meta{}, errGroupEnded
	}
	f := g.f
	ch := change{slot: f.k.SlotBytes(w.Name)}
	h := ch.hexSlot()
	c, exists, old, lerr := g.current(ch.slot, string(h[:]), w)
	next, m, err := stepLine(w, c, exists, lerr, f.hist, f.now().UTC())
	if err != nil {
		return vault.Meta{}, err
	}
	body, lines := g.body-old, g.lines
	if old > 0 {
		lines--
	}
	body += chainLine(next, g.gen)
	lines++
	// Bound as a single write is: against the file as the group's
	// earlier writes leave it, the commit's mark in its header.
	if g.size(body, lines) > f.opt.bound(g.size(g.body, g.lines)) {
		return vault.Meta{}, f.opt.tooLargeWrite(f.path)
	}
	if err := approve(m); err != nil {
		return vault.Meta{}, err
	}
	g.body, g.lines = body, lines
	rec := groupRec{slot: ch.slot, chain: next}
	if j, ok := g.bySlot[ch.slot]; ok {
		g.recs[j] = rec
	} else {
		g.bySlot[ch.slot] = len(g.recs)
		g.recs = append(g.recs, rec)
	}
	return m, nil
}

// current is the chain in slot as the group leaves it so far, whether a
// line holds it, the size of that line (0: none), and the error that kept
// the line from opening.
func (g *group) current(id [seal.SlotSize]byte, slot string, w vault.Write) (vault.Chain, bool, int64, error) {
	if j, ok := g.bySlot[id]; ok {
		r := g.recs[j]
		return r.chain, true, chainLine(r.chain, g.gen), nil
	}
	c, exists, err := g.f.lookupChain(slot, w.Name)
	var old int64
	if exists {
		b64, _, _ := g.f.cur.find(slot) // found by lookupChain
		old = lineSize(len(b64))
	}
	return c, exists, old, err
}

// Commit implements vault.Group: every kept change in one new file,
// synced and renamed into place.
func (g *group) Commit(context.Context) error {
	if g.ended {
		return errGroupEnded
	}
	defer g.end()
	if len(g.recs) == 0 {
		return nil
	}
	changes := make([]change, len(g.recs))
	for i, r := range g.recs {
		changes[i] = change{r.slot, int32(i)}
	}
	slices.SortFunc(changes, func(a, b change) int { return bytes.Compare(a.slot[:], b.slot[:]) })
	return g.f.rewriteWith(g.dest, g.hdr, g.size(g.body, g.lines), g.gen, changes, func(dst, raw []byte, ch change, slot string) ([]byte, []byte, error) {
		return appendChainBlob(g.f.k, dst, raw, slot, g.recs[ch.i].chain, g.gen)
	})
}

// Abort implements vault.Group.
func (g *group) Abort() {
	if !g.ended {
		g.end()
	}
}

func (g *group) end() {
	g.ended = true
	g.recs, g.bySlot = nil, nil
	g.unlock()
	g.f.mu.Unlock()
}
