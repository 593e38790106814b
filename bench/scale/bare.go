package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/arca-secrets/arca/vault/etcd/etcdtest/launch"
)

// bareLane is the baseline of a session: an etcd client of its own (a
// connection, as a session has), with each request in flight in a
// goroutine of its own, one request after another.
type bareLane struct {
	cli   *clientv3.Client
	value string // what it puts, and what its gets must read: bareValue
}

// bareKey is the key of request i of a bare lane's slot (its goroutine).
func bareKey(l load, lane, slot int, i uint64) string {
	switch l {
	case putOwn:
		return fmt.Sprintf("%ss%d-%d-%d", barePrefix, lane, slot, i%ownNames)
	case putShared:
		return barePrefix + "shared"
	}
	return fmt.Sprintf("%sg%d", barePrefix, (uint64(lane+slot)+i)%seeded)
}

// clients makes n clients of the cluster, each answering one get before
// it is returned. On error, those made are closed.
func (e *env) clients(n int) ([]lane, error) {
	lanes := make([]lane, 0, n)
	fail := func(err error) ([]lane, error) {
		for _, l := range lanes {
			l.(bareLane).cli.Close()
		}
		return nil, err
	}
	for i := range n {
		cli, err := launch.NewClient(e.cluster.AllEndpoints()...)
		if err != nil {
			return fail(err)
		}
		b := bareLane{cli, bareValue()}
		lanes = append(lanes, b)
		if problem, detail := b.do(getSeeded, bareKey(getSeeded, i, 0, 0), e.o.timeout); problem != "" {
			return fail(fmt.Errorf("client %d, its first get: %s: %s", i, problem, detail))
		}
	}
	return lanes, nil
}

func (b bareLane) drive(m measurement, lane int, end time.Time, deadline time.Duration) tally {
	defer b.cli.Close()
	tallies := make([]tally, m.depth)
	var wg sync.WaitGroup
	for slot := range m.depth {
		wg.Go(func() { tallies[slot] = b.loop(m.load, lane, slot, end, deadline) })
	}
	wg.Wait()
	var t tally
	for _, s := range tallies {
		t.add(s)
	}
	return t
}

// loop sends one request after another until end.
func (b bareLane) loop(l load, lane, slot int, end time.Time, deadline time.Duration) tally {
	var t tally
	for i := uint64(1); ; i++ {
		sent := time.Now()
		if !sent.Before(end) {
			return t
		}
		t.sent++
		problem, detail := b.do(l, bareKey(l, lane, slot, i), deadline)
		now := time.Now()
		t.answered(now.Sub(sent), now, end, deadline, problem, detail)
	}
}

// do is one request: a linearizable get of key, which must hold b.value,
// or a put of b.value at key. It returns what went wrong,
// as tally.answered takes it.
func (b bareLane) do(l load, key string, deadline time.Duration) (problem, detail string) {
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	if l != getSeeded {
		if _, err := b.cli.Put(ctx, key, b.value); err != nil {
			return "client error", err.Error()
		}
		return "", ""
	}
	resp, err := b.cli.Get(ctx, key)
	switch {
	case err != nil:
		return "client error", err.Error()
	case len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != b.value:
		return "wrong value", key + " does not hold what was put"
	}
	return "", ""
}
