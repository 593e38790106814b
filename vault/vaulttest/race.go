package vaulttest

import (
	"bytes"
	"errors"
	"fmt"
	"sync"

	"github.com/arca-secrets/arca/vault"
)

// racers is how many writers race one if_version put.
const racers = 50

// racer is what one writer of the race got.
type racer struct {
	m   vault.Meta
	err error
}

// Writers with their own handles who all read one version and race a put
// conditional on it: exactly one wins, every other gets a *ConflictError
// naming the winner's version, and the winner's value is the one kept.
func testIfVersionRace(h *hfix) {
	n := "race/key"
	setup := h.open()
	h.clock.tick()
	h.must(setup, put(n, "v1"))
	read := h.must(setup, put(n, "v2")).Version
	handles := make([]vault.Store, racers)
	for i := range handles {
		handles[i] = h.open()
		if r := h.get(handles[i], n); r.Version != read {
			h.t.Fatalf("writer %d read version %d, want %d", i, r.Version, read)
		}
	}
	start := make(chan struct{})
	results := make([]racer, racers)
	var wg sync.WaitGroup
	for i, s := range handles {
		wg.Go(func() {
			<-start
			m, _, err := h.via.write(h.t.Context(), s, ifVersion(put(n, racerValue(i)), read))
			results[i] = racer{m, err}
		})
	}
	close(start)
	wg.Wait()

	var winners []int
	var wrong []string
	for i, r := range results {
		var ce *vault.ConflictError
		switch {
		case r.err == nil:
			winners = append(winners, i)
		case !errors.As(r.err, &ce):
			wrong = append(wrong, fmt.Sprintf("writer %d: %v, want a *ConflictError", i, r.err))
		case ce.Current != read+1:
			wrong = append(wrong, fmt.Sprintf("writer %d: conflict with current version %d, want the winner's %d", i, ce.Current, read+1))
		}
	}
	if len(wrong) > 0 {
		h.t.Errorf("%d of %d losers were not told the winner's version, first: %s", len(wrong), racers-len(winners), wrong[0])
	}
	if len(winners) != 1 {
		var vs []uint64
		for _, i := range winners {
			vs = append(vs, results[i].m.Version)
		}
		h.t.Fatalf("%d writers won the race (versions %v), want exactly one", len(winners), vs)
	}
	winner := winners[0]
	if v := results[winner].m.Version; v != read+1 {
		h.t.Errorf("the winner wrote version %d, want %d", v, read+1)
	}
	got := h.get(h.open(), n)
	if got.Version != read+1 || !bytes.Equal(got.Value.Reveal(), []byte(racerValue(winner))) {
		h.t.Errorf("after the race: version %d, the winner's value kept %t; want version %d and the winner's value", got.Version, bytes.Equal(got.Value.Reveal(), []byte(racerValue(winner))), read+1)
	}
	h.wantChain(setup, n, chainWant{current: kept{read + 1, racerValue(winner)}, previous: []kept{{2, "v2"}, {1, "v1"}}, highest: read + 1})
}

func racerValue(i int) string { return fmt.Sprintf("written by racer %d", i) }

// A poller following Changes while writers write misses no change: the
// last state it is told of each name is the state the name was left in.
func testChangesWhileWriting(f *fixture) {
	const names, rounds = 5, 5
	poller := f.open()
	cursor := f.changes(poller, "", 3).Cursor
	handles := make([]vault.Store, writers)
	for i := range handles {
		handles[i] = f.open()
	}
	done, errs := make(chan struct{}), make(chan error, writers)
	var wg sync.WaitGroup
	for w, s := range handles {
		wg.Go(func() {
			for r := range rounds {
				for i := range names {
					name := fmt.Sprintf("w%d/k%d", w, i)
					if _, err := s.Apply(f.t.Context(), put(name, fmt.Sprintf("round %d", r)), approveAll); err != nil {
						errs <- fmt.Errorf("writer %d: %w", w, err)
						return
					}
				}
			}
		})
	}
	go func() { wg.Wait(); close(done) }()
	last := map[string]vault.Change{}
	poll := func() {
		for {
			ch, err := poller.Changes(f.t.Context(), cursor, 3)
			if err != nil || ch.Reset {
				f.t.Fatalf("Changes while writers write: reset %t, err %v", ch.Reset, err)
			}
			for _, c := range ch.Changes {
				last[c.Name] = c
			}
			if cursor = ch.Cursor; !ch.Truncated {
				return
			}
		}
	}
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		poll()
	}
	close(errs)
	for err := range errs {
		f.t.Fatal(err)
	}
	poll()
	if len(last) != writers*names {
		f.t.Errorf("the poller was told of %d names, want %d", len(last), writers*names)
	}
	for name, c := range last {
		if c.State != vault.StateCurrent || c.Version != rounds {
			f.t.Errorf("the poller was last told %s is %s at version %d, want current at %d", name, c.State, c.Version, rounds)
		}
	}
	// The handle that polled reads what the writers left, as any does.
	for w := range writers {
		for i := range names {
			if r := f.get(poller, fmt.Sprintf("w%d/k%d", w, i)); r.Version != rounds {
				f.t.Errorf("the poller's handle reads w%d/k%d at version %d once the writers are done, want %d", w, i, r.Version, rounds)
			}
		}
	}
}
