package ops

import (
	"context"
	"testing"
)

// TestTurns: a turn settles a key once every earlier turn entered its
// keys and none of them still holds that key; other keys do not wait;
// turn 0 never waits; a cancelled wait returns.
func TestTurns(t *testing.T) {
	s := &Service{}
	a, b := grantKey{ref: "a"}, grantKey{ref: "b"}
	t1, t2, t3 := s.Turn(), s.Turn(), s.Turn()
	ts := &s.turns
	ready := func(turn uint64, key grantKey) <-chan error {
		ch := make(chan error, 1)
		go func() { ch <- ts.wait(context.Background(), turn, key) }()
		return ch
	}
	w3 := ready(t3, a)
	select {
	case <-w3:
		t.Fatal("turn 3 settled before turns 1 and 2 entered their keys")
	default:
	}
	ts.enter(t1, a)
	ts.enter(t2, b)
	if err := ts.wait(context.Background(), t2, b); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w3:
		t.Fatal("turn 3 settled key a while turn 1 holds it")
	default:
	}
	ts.release(t1)
	if err := <-w3; err != nil {
		t.Fatal(err)
	}
	if err := ts.wait(context.Background(), 0, a); err != nil {
		t.Fatal(err)
	}
	t4 := s.Turn()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := ts.wait(ctx, s.Turn(), a); err == nil {
		t.Error("a wait behind a turn never entered returned without its ctx's error")
	}
	ts.release(t4)
	ts.release(t4) // twice: nothing
	ts.release(0)
}
