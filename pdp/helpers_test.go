package pdp

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// margin is how far past its timeout a decision may return: a bound on a
// deadline, not a speed benchmark.
const margin = time.Second

// outcome is one decision as a test sees it.
type outcome struct {
	v       Verdict
	pgid    int
	err     error
	elapsed time.Duration
	alloc   uint64 // bytes allocated during the decision (TotalAlloc delta)
}

// decideMeasured runs one decision and measures its time and allocations.
func decideMeasured(ctx context.Context, cfg Config, req Request, shell string) outcome {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	t0 := time.Now()
	v, pgid, err := decide(ctx, cfg, req, shell)
	elapsed := time.Since(t0)
	runtime.ReadMemStats(&after)
	return outcome{v: v, pgid: pgid, err: err, elapsed: elapsed, alloc: after.TotalAlloc - before.TotalAlloc}
}

// wantUnreachable fails t unless err is an *Unreachable whose Why contains
// phrase.
func wantUnreachable(t *testing.T, err error, phrase string) {
	t.Helper()
	var u *Unreachable
	if !errors.As(err, &u) {
		t.Fatalf("err = %v, want *Unreachable containing %q", err, phrase)
	}
	if !strings.Contains(u.Why, phrase) {
		t.Fatalf("Why = %q, want it to contain %q", u.Why, phrase)
	}
}

// wantGroupGone fails t if any live process of group pgid remains. SIGKILL
// is delivered asynchronously, so it allows the kernel a moment, polling
// /proc: the group's other members are not this process's children, and
// their end sends it no event. Zombies count as gone: they run nothing,
// and a container's init may never reap orphans.
func wantGroupGone(t *testing.T, pgid int) {
	t.Helper()
	if pgid <= 0 {
		t.Fatalf("pgid = %d, want a started child", pgid)
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		if syscall.Kill(-pgid, 0) == syscall.ESRCH {
			return
		}
		live := liveMembers(pgid)
		if len(live) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes %v of group %d survived the decision", live, pgid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// wantDead fails t if process pid is still running (zombies count as dead).
// It polls /proc for a moment, as wantGroupGone does and for its reason:
// pid is a grandchild, whose end sends this process no event.
func wantDead(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		if err != nil {
			return
		}
		if state, _, ok := statFields(stat); ok && (state == "Z" || state == "X") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d survived the decision", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// liveMembers lists the pids in /proc whose process group is pgid and which
// are not zombies.
func liveMembers(pgid int) []int {
	dirs, _ := os.ReadDir("/proc")
	var live []int
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if err != nil {
			continue
		}
		state, group, ok := statFields(stat)
		if ok && group == pgid && state != "Z" && state != "X" {
			live = append(live, pid)
		}
	}
	return live
}

// statFields reads state and pgrp from /proc/<pid>/stat; the command name
// before them may hold spaces and parentheses, so it starts after the last ')'.
func statFields(stat []byte) (state string, pgrp int, ok bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return "", 0, false
	}
	f := strings.Fields(string(stat[i+1:])) // state ppid pgrp ...
	if len(f) < 3 {
		return "", 0, false
	}
	pgrp, err := strconv.Atoi(f[2])
	return f[0], pgrp, err == nil
}

// wantGoroutinesBack fails t if more than n goroutines are still running
// shortly after a decision. It polls the count: a goroutine that returns
// tells no one.
func wantGoroutinesBack(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines after the decision, %d before", runtime.NumGoroutine(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// sq quotes s as one sh word.
func sq(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// testEnviron is a small parent environment with what sh and coreutils need.
func testEnviron() []string {
	return []string{"PATH=" + os.Getenv("PATH"), "LANG=C"}
}
