package client

import (
	"sync"
	"sync/atomic"
)

// slot is one request's place in line. Slots are reused, buffer and
// channel with them, so a call allocates nothing for its place.
type slot struct {
	id    []byte // the request's id as sent, in idBuf
	idBuf [20]byte
	line  []byte // the response, copied into the slot's own buffer
	err   error  // why there is no response
	// state is waiting until the reader delivers (delivered) or the call's
	// context ends first (abandoned). Whichever side loses the swap frees
	// the slot: an abandoned slot keeps its place in the queue, and the
	// reader drops its response.
	state atomic.Uint32
	done  chan struct{} // delivered: line or err is set
	pool  *slotPool     // where release returns it
}

const (
	waiting = iota
	delivered
	abandoned
)

// slotPool is a client's spare slots: one per call in flight, reused.
type slotPool struct{ p sync.Pool }

func (sp *slotPool) get() *slot {
	if s, ok := sp.p.Get().(*slot); ok {
		return s
	}
	return &slot{done: make(chan struct{}, 1), pool: sp}
}

// deliver hands the slot its response, or the reason there is none.
func (s *slot) deliver(line []byte, err error) {
	if s.state.Load() == abandoned {
		s.release()
		return
	}
	s.line = append(s.line[:0], line...)
	s.err = err
	if s.state.CompareAndSwap(waiting, delivered) {
		s.done <- struct{}{}
		return
	}
	s.release() // the call was abandoned meanwhile: nobody reads this
}

// release wipes the slot and returns it to the pool.
func (s *slot) release() {
	clear(s.line) // a get's response holds a value
	s.line = s.line[:0]
	if cap(s.line) > 64<<10 {
		s.line = nil // let a large response go
	}
	s.err = nil
	s.state.Store(waiting)
	s.pool.p.Put(s)
}

// ring is the queue of slots in request order. The window bounds it: a
// slot is pushed only after a place in the window was taken, and the
// place is given back only after the slot was popped.
type ring struct {
	s       []*slot
	head, n int
}

func (q *ring) push(s *slot) {
	q.s[(q.head+q.n)%len(q.s)] = s
	q.n++
}

func (q *ring) pop() *slot {
	s := q.s[q.head]
	q.s[q.head] = nil
	q.head = (q.head + 1) % len(q.s)
	q.n--
	return s
}
