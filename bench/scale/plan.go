package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// load is what a measurement's requests do.
type load int

const (
	putOwn    load = iota // puts, each session (or client) of records of its own
	putShared             // puts of one record, by every session
	getSeeded             // gets of records put before the run
)

// loads are every load, in the order a run measures them.
func loads() []load { return []load{putOwn, putShared, getSeeded} }

func (l load) String() string {
	return [...]string{"put, own records", "put, one shared record", "get"}[l]
}

// flagName is l's name in -loads.
func (l load) flagName() string { return [...]string{"own", "shared", "get"}[l] }

// measurement is one row of the report: lanes of requests at once, each
// with depth requests in flight, for the run's duration.
type measurement struct {
	bare  bool // a bare etcd client per lane; else an arca serve session
	load  load
	lanes int // sessions, or bare clients
	depth int // requests in flight per lane
}

func (m measurement) String() string {
	who := "arca serve"
	if m.bare {
		who = "bare etcd client"
	}
	return fmt.Sprintf("%s, %s: %d × %d in flight", who, m.load, m.lanes, m.depth)
}

// plan lists the measurements of a run, for each session count in turn:
// the bare client's puts with one in flight per client and arca's puts of
// records of its own; arca's puts of one shared record; the bare client's
// gets and arca's gets; all but the first at each depth, and each only if
// ls holds its load.
func plan(sessions, depths []int, ls []load) []measurement {
	var ms []measurement
	for _, k := range sessions {
		for _, l := range loads() {
			if !slices.Contains(ls, l) {
				continue
			}
			if l == putOwn {
				ms = append(ms, measurement{bare: true, load: putOwn, lanes: k, depth: 1})
			}
			if l == getSeeded {
				for _, d := range depths {
					ms = append(ms, measurement{bare: true, load: getSeeded, lanes: k, depth: d})
				}
			}
			for _, d := range depths {
				ms = append(ms, measurement{load: l, lanes: k, depth: d})
			}
		}
	}
	return ms
}

// loadList is a flag of comma-separated loads, by flagName, none twice.
type loadList []load

func (l *loadList) String() string {
	if l == nil {
		return ""
	}
	s := make([]string, len(*l))
	for i, ld := range *l {
		s[i] = ld.flagName()
	}
	return strings.Join(s, ",")
}

func (l *loadList) Set(v string) error {
	var out []load
	for _, f := range strings.Split(v, ",") {
		i := slices.IndexFunc(loads(), func(ld load) bool { return ld.flagName() == strings.TrimSpace(f) })
		if i < 0 {
			return fmt.Errorf("%q is not a load: own, shared or get", f)
		}
		if slices.Contains(out, loads()[i]) {
			return fmt.Errorf("%s is given twice", f)
		}
		out = append(out, loads()[i])
	}
	*l = out
	return nil
}

// intList is a flag of comma-separated counts, each at least 1, none
// twice, kept in the order given.
type intList []int

func (l *intList) String() string {
	if l == nil {
		return ""
	}
	s := make([]string, len(*l))
	for i, n := range *l {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

func (l *intList) Set(v string) error {
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > maxCount {
			return fmt.Errorf("%q is not a count from 1 to %d", f, maxCount)
		}
		if slices.Contains(out, n) {
			return fmt.Errorf("%d is given twice", n)
		}
		out = append(out, n)
	}
	*l = out
	return nil
}

// maxCount bounds a session count or a depth: each session is a process,
// each request in flight a goroutine of the bare client.
const maxCount = 1024
