package ops

import (
	"context"
	"slices"
	"sync"
)

// turns keeps the grant bookkeeping of reads run at once (serve's runs of
// reads) in request order: each read takes a turn as it is begun, in the
// order the requests came; once it knows the grant keys it will settle
// it enters them (before it asks the PDP), and it settles its verdict
// against a key only once no read begun before it is still to enter its
// keys or still to settle that same key. So when pipelined requests race
// for a grant's last uses, the first asked get them, whatever order their
// PDP decisions come back in; reads of other keys never wait on one
// another's decisions, and the decisions, vault reads and uses still
// overlap.
type turns struct {
	mu      sync.Mutex
	issued  uint64
	open    map[uint64]*turn // turns taken and not yet released
	changed chan struct{}    // closed (and replaced) when open changes
}

// turn is one open turn: whether it entered its keys, and which.
type turn struct {
	entered bool
	keys    []grantKey
}

// Turn takes the next turn, for a read begun now (Request.Turn).
func (s *Service) Turn() uint64 {
	ts := &s.turns
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.issued++
	if ts.open == nil {
		ts.open = map[uint64]*turn{}
	}
	ts.open[ts.issued] = &turn{}
	return ts.issued
}

// enter records the keys turn t will settle (none for 0, a request that
// took no turn).
func (ts *turns) enter(t uint64, keys ...grantKey) {
	if t == 0 {
		return
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if o := ts.open[t]; o != nil {
		o.entered, o.keys = true, keys
		ts.signal()
	}
}

// wait returns once no turn before t is still to enter its keys or holds
// key (at once for t 0), or when ctx ends.
func (ts *turns) wait(ctx context.Context, t uint64, key grantKey) error {
	if t == 0 {
		return nil
	}
	for {
		ts.mu.Lock()
		ready, ch := ts.ready(t, key), ts.changed
		if !ready && ch == nil {
			ch = make(chan struct{})
			ts.changed = ch
		}
		ts.mu.Unlock()
		if ready {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// ready reports, under the lock, whether turn t may settle key.
func (ts *turns) ready(t uint64, key grantKey) bool {
	for u, o := range ts.open {
		if u < t && (!o.entered || slices.Contains(o.keys, key)) {
			return false
		}
	}
	return true
}

// release ends turn t, letting in the turns behind it; releasing a turn
// twice, or turn 0, does nothing.
func (ts *turns) release(t uint64) {
	if t == 0 {
		return
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.open[t] != nil {
		delete(ts.open, t)
		ts.signal()
	}
}

// signal wakes every waiter, under the lock.
func (ts *turns) signal() {
	if ts.changed != nil {
		close(ts.changed)
		ts.changed = nil
	}
}
