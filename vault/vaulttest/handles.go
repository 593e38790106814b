package vaulttest

import (
	"fmt"
	"strconv"
	"sync"

	"github.com/arca-secrets/arca/vault"
)

// testSecondHandle: a handle never serves a value another handle has since
// replaced or removed.
func testSecondHandle(f *fixture) {
	a, b := f.open(), f.open()
	f.wantNotFound(b, "x/k") // b has read the empty vault before a writes
	for i := range 5 {
		f.clock.tick()
		m := f.put(a, "x/k", "from-a-"+strconv.Itoa(i))
		f.wantRecord(b, "x/k", "from-a-"+strconv.Itoa(i), m)
		f.clock.tick()
		m = f.put(b, "x/k", "from-b-"+strconv.Itoa(i))
		f.wantRecord(a, "x/k", "from-b-"+strconv.Itoa(i), m)
		f.wantList(a, []vault.Meta{m})
	}
	f.clock.tick()
	m := f.rotate(b, "x/k", "rotated-by-b")
	f.wantRecord(a, "x/k", "rotated-by-b", m)

	f.remove(a, "x/k")
	f.wantNotFound(b, "x/k")
	f.wantList(b, nil)

	f.clock.tick()
	m = f.put(b, "x/k", "reborn")
	if m.Version != 12 || !m.Created {
		f.t.Errorf("put through b after rm through a: version %d created %t, want 12 true", m.Version, m.Created)
	}
	f.wantRecord(a, "x/k", "reborn", m)
}

// Sizes of the concurrency tests: enough interleaving to lose an update if
// one can be lost, few enough writes to stay quick on a slow disk.
const (
	writers      = 4
	writesEach   = 25
	sharedName   = "shared/counter"
	ownNameSpace = "own"
)

func ownName(w int) string { return fmt.Sprintf("%s/writer-%d", ownNameSpace, w) }

// testConcurrentOwnHandles: writers with their own handles lose no update.
func testConcurrentOwnHandles(f *fixture) {
	handles := make([]vault.Store, writers)
	for i := range handles {
		handles[i] = f.open()
	}
	f.runWriters(func(w int) vault.Store { return handles[w] })
	f.wantCounts(f.open())
}

// testConcurrentSharedHandle: goroutines sharing one handle lose no update.
func testConcurrentSharedHandle(f *fixture) {
	s := f.open()
	f.runWriters(func(int) vault.Store { return s })
	f.wantCounts(s)
	f.wantCounts(f.open())
}

// runWriters runs the writers, each putting writesEach times to the shared
// name and to its own, and fails the test on any error.
func (f *fixture) runWriters(handle func(w int) vault.Store) {
	f.t.Helper()
	errs := make(chan error, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			s := handle(w)
			for i := range writesEach {
				for _, name := range []string{sharedName, ownName(w)} {
					v := secret(fmt.Sprintf("writer %d write %d", w, i))
					if _, err := s.Apply(f.t.Context(), vault.Write{Kind: vault.Put, Name: name, Value: v}, approveAll); err != nil {
						errs <- fmt.Errorf("writer %d put %d: %w", w, i, err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		f.t.Error(err)
	}
	if f.t.Failed() {
		f.t.FailNow()
	}
}

func approveAll(vault.Meta) error { return nil }

// wantCounts checks the versions the writers must have left.
func (f *fixture) wantCounts(s vault.Store) {
	f.t.Helper()
	if r := f.get(s, sharedName); r.Version != writers*writesEach {
		f.t.Errorf("%s: version %d, want %d: updates were lost", sharedName, r.Version, writers*writesEach)
	}
	for w := range writers {
		if r := f.get(s, ownName(w)); r.Version != writesEach {
			f.t.Errorf("%s: version %d, want %d", ownName(w), r.Version, writesEach)
		}
	}
	if ms := f.list(s); len(ms) != writers+1 {
		f.t.Errorf("List: %d records, want %d", len(ms), writers+1)
	}
}
