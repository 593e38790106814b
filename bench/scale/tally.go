package main

import (
	"maps"
	"slices"
	"time"
)

// tally is what one lane's requests came to. Each lane keeps its own;
// a measurement merges them.
type tally struct {
	sent       int
	ok         int               // answered "ok":true (and, for a get, with the value put)
	inWindow   int               // of ok, answered before the measurement's end
	notOK      map[string]int    // answers that are not ok, by error code
	firstOf    map[string]string // the first message of each code in notOK
	late       int               // answers, ok or not, later than the vault's deadline
	unanswered int               // requests sent that got no answer
	lat        []time.Duration
	firstErr   string // the first problem seen, for the error report
	// serveCPU is the CPU time of the lane's arca serve process, its
	// start-up included; 0 for a bare client.
	serveCPU time.Duration
}

// answered records one answer, lat after its request was sent, at the
// time at. problem is "" for an ok answer, else its error code or what
// was wrong with it; detail says more, for the error report.
func (t *tally) answered(lat time.Duration, at, end time.Time, deadline time.Duration, problem, detail string) {
	t.lat = append(t.lat, lat)
	if lat > deadline {
		t.late++
		t.fail("answered " + lat.Round(time.Millisecond).String() + " after it was sent, past the deadline")
	}
	if problem != "" {
		t.notOKOnce(problem, 1, detail)
		t.fail(problem + ": " + detail)
		return
	}
	t.ok++
	if at.Before(end) {
		t.inWindow++
	}
}

// lost records n requests that got no answer, for why.
func (t *tally) lost(n int, why string) {
	if n > 0 {
		t.unanswered += n
		t.fail(why)
	}
}

// notOKOnce counts n answers not ok with code, keeping the first detail.
func (t *tally) notOKOnce(code string, n int, detail string) {
	if t.notOK == nil {
		t.notOK, t.firstOf = map[string]int{}, map[string]string{}
	}
	if t.notOK[code] == 0 {
		t.firstOf[code] = detail
	}
	t.notOK[code] += n
}

// fail keeps why if it is the first problem.
func (t *tally) fail(why string) {
	if t.firstErr == "" {
		t.firstErr = why
	}
}

// add merges o into t.
func (t *tally) add(o tally) {
	t.sent += o.sent
	t.ok += o.ok
	t.inWindow += o.inWindow
	t.late += o.late
	t.unanswered += o.unanswered
	t.lat = append(t.lat, o.lat...)
	t.serveCPU += o.serveCPU
	for code, n := range o.notOK {
		t.notOKOnce(code, n, o.firstOf[code])
	}
	t.fail(o.firstErr)
}

// failed counts the answers that were not ok.
func (t tally) failed() int {
	n := 0
	for _, c := range t.notOK {
		n += c
	}
	return n
}

// errors counts every request that went wrong: not ok, late or never
// answered (a late answer that is not ok counts once per fault).
func (t tally) errors() int { return t.failed() + t.late + t.unanswered }

// codes are the error codes seen, in order.
func (t tally) codes() []string { return slices.Sorted(maps.Keys(t.notOK)) }

// percentile is the p-th percentile of the latencies (0 without any).
func (t tally) percentile(p int) time.Duration {
	if len(t.lat) == 0 {
		return 0
	}
	lat := slices.Sorted(slices.Values(t.lat))
	return lat[min(len(lat)-1, len(lat)*p/100)]
}
