package action

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestTimeoutKillsTheGroup: at the deadline the child and the grandchild
// it started are killed; the result says so.
func TestTimeoutKillsTheGroup(t *testing.T) {
	cfg := shAction(`sleep 1000 & echo $!; wait`)
	cfg.TimeoutMS = 1000 // long enough for the child to print its pid first
	res := run(t, cfg, nil, baseEnv())
	if !res.TimedOut || res.Signal != "SIGKILL" || res.ExitCode != -1 {
		t.Fatalf("timed out %v, signal %q, exit %d; want true, SIGKILL, -1", res.TimedOut, res.Signal, res.ExitCode)
	}
	wantGone(t, pidIn(t, res.Stdout))
}

// TestGrandchildHoldingThePipes: a child that exits leaving a grandchild
// with its output open returns at its exit, not at the deadline; the
// grandchild dies with the group.
func TestGrandchildHoldingThePipes(t *testing.T) {
	res := run(t, shAction(`sleep 1000 & echo $!`), nil, baseEnv())
	if res.TimedOut || res.ExitCode != 0 || res.Signal != "" {
		t.Fatalf("timed out %v, exit %d, signal %q; want false, 0, none", res.TimedOut, res.ExitCode, res.Signal)
	}
	wantGone(t, pidIn(t, res.Stdout))
}

// TestEscapedGrandchild: a grandchild that left the group (setsid) and
// holds the output open does not keep Run from returning: its ends of the
// pipes are closed after a grace. The child waits until the grandchild has
// left (it writes its pid to a fifo once in its own session).
func TestEscapedGrandchild(t *testing.T) {
	fifo := makeFifo(t)
	cfg := shAction(`setsid sh -c 'echo $$ > "$0"; exec sleep 1000' "$1" & read pid < "$1"; echo $pid`)
	cfg.MaxArgs = 1
	res := run(t, cfg, []string{fifo}, baseEnv())
	pid := pidIn(t, res.Stdout)
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	if res.TimedOut || res.ExitCode != 0 {
		t.Fatalf("timed out %v, exit %d; want false, 0", res.TimedOut, res.ExitCode)
	}
	if pgid, _ := syscall.Getpgid(pid); pgid != pid {
		t.Fatalf("the grandchild %d leads group %d, not its own: it did not escape", pid, pgid)
	}
}

// TestCancelKillsTheGroup: the caller's context ending kills the child and
// its grandchild, and Run returns the context's error. The child writes
// the grandchild's pid to a fifo; the test cancels once it has read it.
func TestCancelKillsTheGroup(t *testing.T) {
	fifo := makeFifo(t)
	cfg := shAction(`sleep 1000 & echo $! > "$1"; wait`)
	cfg.MaxArgs = 1
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pids := make(chan int, 1)
	go func() {
		defer cancel()
		b, _ := os.ReadFile(fifo)
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		pids <- pid
	}()
	res, err := Run(ctx, cfg, []string{fifo}, baseEnv())
	if !errors.Is(err, context.Canceled) || res != nil {
		t.Fatalf("Run: %+v, %v; want no result and context.Canceled", res, err)
	}
	pid := <-pids
	if pid <= 0 {
		t.Fatal("the child never wrote its grandchild's pid")
	}
	wantGone(t, pid)
}

// TestChildLeadsItsOwnGroup: the child's process group is its own, not
// arca's.
func TestChildLeadsItsOwnGroup(t *testing.T) {
	res := run(t, shAction(`set -- $(cat /proc/$$/stat); echo "$$ $5"`), nil, baseEnv())
	f := strings.Fields(string(res.Stdout))
	if len(f) != 2 || f[0] != f[1] {
		t.Fatalf("pid and group %q, want equal", res.Stdout)
	}
	if f[1] == strconv.Itoa(syscall.Getpgrp()) {
		t.Fatalf("the child runs in arca's group %s", f[1])
	}
}

// TestStdinIsTheNullDevice: fd 0 of the child is /dev/null itself.
func TestStdinIsTheNullDevice(t *testing.T) {
	cfg := shAction("")
	cfg.Argv = []string{"readlink", "/proc/self/fd/0"}
	if res := run(t, cfg, nil, baseEnv()); string(res.Stdout) != "/dev/null\n" {
		t.Fatalf("stdin is %q, want /dev/null", res.Stdout)
	}
}

func makeFifo(t *testing.T) string {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	return fifo
}

// pidIn reads the pid on the first line of out.
func pidIn(t *testing.T, out []byte) int {
	t.Helper()
	line, _, _ := bufio.NewReader(bytes.NewReader(out)).ReadLine()
	pid, err := strconv.Atoi(string(line))
	if err != nil || pid <= 0 {
		t.Fatalf("output %q holds no pid", out)
	}
	return pid
}

// wantGone fails t unless process pid is gone (kill(pid, 0) is ESRCH) or a
// zombie — a container's init may never reap orphans — within a few
// seconds. It polls: pid is a grandchild, whose end sends this process no
// event, and SIGKILL is delivered asynchronously.
func wantGone(t *testing.T, pid int) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(5 * time.Second)
	for {
		if syscall.Kill(pid, 0) == syscall.ESRCH || zombie(pid) {
			return
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("process %d survived the run", pid)
		}
	}
}

// zombie reports whether pid has exited and waits to be reaped.
func zombie(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	f := strings.Fields(string(stat[i+1:]))
	return len(f) > 0 && (f[0] == "Z" || f[0] == "X")
}
