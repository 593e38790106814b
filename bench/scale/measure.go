package main

import (
	"fmt"
	"sync"
	"time"
)

// lane is one stream of requests of a measurement: an arca serve session,
// or a bare etcd client.
type lane interface {
	// drive sends m's requests as lane number i with up to m.depth in
	// flight until end, then waits for those still due (each bounded by
	// deadline) and ends the lane; it returns what they came to.
	drive(m measurement, i int, end time.Time, deadline time.Duration) tally
}

// result is one measurement's figures.
type result struct {
	m        measurement
	duration time.Duration // requests were sent for this long
	tally
	// etcdCPU is the CPU time the members spent from the start to the
	// last lane's end (answers after the end included); <0: unknown.
	etcdCPU time.Duration
}

// rate is the ok answers per second that came before the end.
func (r result) rate() float64 { return float64(r.inWindow) / r.duration.Seconds() }

// measure runs m: its lanes are started, each answering one get, then
// every lane sends at once for the run's duration.
func (e *env) measure(m measurement) (result, error) {
	start := e.sessions
	if m.bare {
		start = e.clients
	}
	lanes, err := start(m.lanes)
	if err != nil {
		return result{}, err
	}
	cpu0, cpuErr := etcdCPU(e.cluster)
	end := time.Now().Add(e.o.duration)
	tallies := make([]tally, len(lanes))
	var wg sync.WaitGroup
	for i, l := range lanes {
		wg.Go(func() { tallies[i] = l.drive(m, i, end, e.o.timeout) })
	}
	wg.Wait()
	r := result{m: m, duration: e.o.duration, etcdCPU: -1}
	if cpu1, err := etcdCPU(e.cluster); err == nil && cpuErr == nil {
		r.etcdCPU = cpu1 - cpu0
	}
	for _, t := range tallies {
		r.add(t)
	}
	return r, nil
}

// sessions starts n arca serve sessions, each answering one get before it
// is returned. On error, those started are ended.
func (e *env) sessions(n int) ([]lane, error) {
	var started []*session
	fail := func(err error) ([]lane, error) {
		for _, s := range started {
			s.close()
		}
		return nil, err
	}
	for i := range n {
		s, err := e.home.serve()
		if err != nil {
			return fail(err)
		}
		started = append(started, s)
		if err := s.roundTrip(string(request(nil, getSeeded, i, 0)), 0, true); err != nil {
			return fail(fmt.Errorf("session %d, its first get: %w", i, err))
		}
	}
	lanes := make([]lane, n)
	for i, s := range started {
		lanes[i] = s
	}
	return lanes, nil
}
