package pdp

import (
	"context"
	"net"
	"sync"
	"time"
)

// spareAge bounds how long a connection dialled ahead waits for its
// decision: a server may close a connection that sits idle, and a
// decision sent on one it closed would fail.
const spareAge = 500 * time.Millisecond

// spareDialer dials ahead: each connection it hands out has the next one
// dialled beside it, so that a decision's own dial (a connection each, see
// httpPDP) is off its path. A spare is a fresh connection that has carried
// nothing: no answer on it can be the copy of another's. One older than
// spareAge is closed, not used.
type spareDialer struct {
	dial   func(ctx context.Context) (net.Conn, error)
	maxAge time.Duration // spareAge; the tests' own
	stored func()        // called when a spare is in place; the tests'

	mu     sync.Mutex
	conn   net.Conn
	at     time.Time
	busy   bool // a dial ahead is running
	closed bool
}

// DialContext hands out the spare when it is fresh, else dials; either
// way the next spare is dialled in the background.
func (s *spareDialer) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	s.mu.Lock()
	c, at := s.conn, s.at
	s.conn = nil
	s.mu.Unlock()
	if c != nil && time.Since(at) >= s.maxAge {
		c.Close()
		c = nil
	}
	if c == nil {
		var err error
		if c, err = s.dial(ctx); err != nil {
			return nil, err
		}
	}
	s.ahead()
	return c, nil
}

// ahead dials the next spare, unless one is there or on its way.
func (s *spareDialer) ahead() {
	s.mu.Lock()
	if s.busy || s.conn != nil || s.closed {
		s.mu.Unlock()
		return
	}
	s.busy = true
	s.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		c, err := s.dial(ctx)
		s.mu.Lock()
		defer s.mu.Unlock()
		s.busy = false
		if err != nil {
			return
		}
		if s.closed || s.conn != nil {
			c.Close()
			return
		}
		s.conn, s.at = c, time.Now()
		if s.stored != nil {
			s.stored()
		}
	}()
}

// Close closes the spare, and any dialled after.
func (s *spareDialer) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.conn != nil {
		s.conn.Close()
		s.conn = nil
	}
}
