package pdp

import (
	"context"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// fakeDials counts the connections dialled and keeps their far ends.
type fakeDials struct {
	n    atomic.Int32
	fars chan net.Conn
}

func (f *fakeDials) dial(context.Context) (net.Conn, error) {
	f.n.Add(1)
	near, far := net.Pipe()
	f.fars <- far
	return near, nil
}

// closed reports whether the far end's peer was closed (a peer left open
// fails it at the deadline, a bound on the test, not an order).
func closed(far net.Conn, wait time.Duration) bool {
	far.SetReadDeadline(time.Now().Add(wait))
	_, err := far.Read(make([]byte, 1))
	return errors.Is(err, io.EOF)
}

// A decision's connection is the one dialled ahead when it is fresh; a
// stale one is closed and another dialled; Close closes the spare. Every
// connection handed out is a new one: none carries two decisions.
func TestSpareDialer(t *testing.T) {
	f := &fakeDials{fars: make(chan net.Conn, 16)}
	stored := make(chan struct{}, 16)
	s := &spareDialer{dial: f.dial, maxAge: spareAge, stored: func() { stored <- struct{}{} }}
	ctx := context.Background()
	c1, err := s.DialContext(ctx, "", "")
	if err != nil {
		t.Fatal(err)
	}
	<-stored // the spare is in place
	if n := f.n.Load(); n != 2 {
		t.Fatalf("after one decision's dial: %d dials, want 2 (its own and the spare)", n)
	}
	c2, err := s.DialContext(ctx, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if c2 == c1 {
		t.Fatal("a connection handed out twice")
	}
	<-stored
	if n := f.n.Load(); n != 3 {
		t.Fatalf("the second decision dialled for itself: %d dials, want 3", n)
	}
	// A spare older than maxAge is closed, never used.
	s.maxAge = 0
	c3, err := s.DialContext(ctx, "", "")
	if err != nil {
		t.Fatal(err)
	}
	<-stored
	if n := f.n.Load(); n != 5 {
		t.Fatalf("a stale spare: %d dials, want 5 (a fresh one for the decision, and the next spare)", n)
	}
	fars := make([]net.Conn, 0, 5)
	for range 5 {
		fars = append(fars, <-f.fars)
	}
	if !closed(fars[2], 5*time.Second) || closed(fars[3], 50*time.Millisecond) {
		t.Error("the stale spare was not closed, or the fresh one was")
	}
	s.Close()
	if !closed(fars[4], 5*time.Second) {
		t.Error("Close left the spare open")
	}
	for _, c := range []net.Conn{c1, c2, c3} {
		c.Close()
	}
}
