package serve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// hangingPDP is a PDP that never answers: it starts a grandchild, records
// both pids in dir (pdp: the PDP child, which leads its process group;
// grandchild), and waits. Each file is written whole and renamed into
// place, so that of PDPs deciding at once (the reads of a run), a reader
// sees one's pid, never a file one of them had only begun.
func hangingPDP(dir string) string {
	put := func(pid, name string) string {
		tmp := sq(filepath.Join(dir, name)+".") + "$$"
		return "echo " + pid + " > " + tmp + " && mv " + tmp + " " + sq(filepath.Join(dir, name)) + "; "
	}
	return "sleep 300 & " + put("$!", "grandchild") + put("$$", "pdp") + "wait"
}

// hangingPDPConfig runs hangingPDP with a timeout far longer than a
// test's wait for serve to end.
func hangingPDPConfig(dir string) string {
	return "[serve.pdp]\nexec = " + quoteTOML(hangingPDP(dir)) + "\ntimeout_ms = 120000\n"
}

// TestSignalEndsSession: a signal while a request waits on its PDP ends the
// session in-process: the PDP's whole group is killed, the request in hand
// is answered pdp_unreachable and audited, the line behind it is not
// answered, the last event is stop naming the signal, and Serve fails.
func TestSignalEndsSession(t *testing.T) {
	dir := t.TempDir()
	f := newFixtureConfig(t, "[serve.pdp]\nexec = "+quoteTOML(hangingPDP(dir))+"\ntimeout_ms = 20000\n")
	sent := lines(`{"id":1,"op":"get","ref":"arca://app/db"}`, `{"id":2,"op":"manifest"}`)
	stdin, feed := io.Pipe()
	defer feed.Close()
	go feed.Write([]byte(sent))
	sigs, done := make(chan os.Signal, 1), make(chan struct{})
	defer close(done)
	go func() {
		readPID(filepath.Join(dir, "pdp")) // the PDP runs: the get is in hand
		sigs <- syscall.SIGTERM
		// Should the signal be lost, the PDP times out and EOF ends the
		// session: the test fails on what it wrote rather than hang.
		select {
		case <-time.After(30 * time.Second):
			feed.Close()
		case <-done:
		}
	}()
	tr := f.session(t, sessionOpts{stdin: stdin, sent: []byte(sent), environ: os.Environ(), signals: sigs, interrupted: true})
	if tr.err == nil || !strings.Contains(tr.err.Error(), "signal: terminated") {
		t.Errorf("Serve returned %v, want an error naming the signal", tr.err)
	}
	checkReplies(t, tr, []want{{id: "1", code: "pdp_unreachable", msg: "cancelled"}})
	wantStop(t, tr, "signal: terminated")
	wantPDPGone(t, dir)
	f.spy.mu.Lock()
	defer f.spy.mu.Unlock()
	if f.spy.calls["get"] != 0 {
		t.Errorf("the interrupted get reached the vault")
	}
}

// TestCancelEndsSession: a cancelled ctx ends an idle session the same way.
func TestCancelEndsSession(t *testing.T) {
	f := newFixture(t)
	stdin, feed := io.Pipe()
	defer feed.Close()
	ctx, cancel := context.WithCancel(context.Background())
	go feed.Write([]byte(lines(`{"id":1,"op":"list"}`)))
	// Cancelled once the reply is out: the loop flushes it before it reads again.
	replied := &onWrite{do: cancel}
	tr := f.session(t, sessionOpts{stdin: stdin, sent: []byte(lines(`{"id":1,"op":"list"}`)), stdout: replied, ctx: ctx, interrupted: true})
	if tr.err == nil {
		t.Errorf("Serve returned nil after its ctx was cancelled")
	}
	checkReplies(t, tr, []want{ok("1")})
	wantStop(t, tr, "cancelled: context canceled")
}

// onWrite calls do on its first write.
type onWrite struct {
	once sync.Once
	do   func()
}

func (w *onWrite) Write(p []byte) (int, error) {
	w.once.Do(w.do)
	return len(p), nil
}

// TestSignalsEndServeCleanly sends each stop signal to a real `arca serve`,
// with a request waiting on a PDP that has a grandchild, and idle: serve
// exits 1 (not killed by the signal), stderr is nothing but event lines
// (no goroutine dump), the last one stop naming the signal, the request in
// hand is answered, and nothing of the PDP's process group survives.
func TestSignalsEndServeCleanly(t *testing.T) {
	b := buildArca(t)
	for _, c := range []struct {
		sig  syscall.Signal
		idle bool
		name string
	}{
		{syscall.SIGTERM, false, "SIGTERM"}, {syscall.SIGINT, false, "SIGINT"}, {syscall.SIGHUP, false, "SIGHUP"},
		{syscall.SIGQUIT, false, "SIGQUIT"}, {syscall.SIGABRT, false, "SIGABRT"},
		{syscall.SIGTERM, true, "SIGTERM idle"}, {syscall.SIGQUIT, true, "SIGQUIT idle"}, {syscall.SIGTRAP, true, "SIGTRAP idle"},
		{syscall.SIGSEGV, true, "SIGSEGV idle"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			sent := lines(`{"id":1,"op":"get","ref":"arca://app/db"}`, `{"id":2,"op":"list"}`)
			if c.idle {
				sent = lines(`{"id":1,"op":"manifest"}`)
			}
			p := startServe(t, b, writeConfig(t, dir, hangingPDPConfig(dir)), sent)
			if c.idle {
				p.waitFor(t, `"id":1,`) // answered: serve waits on stdin
			} else {
				waitForPID(t, filepath.Join(dir, "pdp"))
			}
			if err := p.cmd.Process.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			tr := p.wait(t)
			checkWire(t, tr, []byte(sent), false) // the schemas; the clock is real
			if bytes.Contains(tr.rawErr, []byte("goroutine")) {
				t.Errorf("stderr holds a goroutine dump:\n%s", short(string(tr.rawErr)))
			}
			wantStop(t, tr, "signal: "+c.sig.String())
			if c.idle {
				checkReplies(t, tr, []want{ok("1")})
				return
			}
			checkReplies(t, tr, []want{{id: "1", code: "pdp_unreachable", msg: "cancelled"}})
			wantPDPGone(t, dir)
		})
	}
}

// serveProc is a running `arca serve` whose stdin stays open.
type serveProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    watchedBuffer
	errOut lockedBuffer
}

// watchedBuffer is a lockedBuffer that says when it has been written to.
type watchedBuffer struct {
	lockedBuffer
	wrote chan struct{} // a send after a write, unless one waits unread
}

func (w *watchedBuffer) Write(p []byte) (int, error) {
	n, err := w.lockedBuffer.Write(p)
	select {
	case w.wrote <- struct{}{}:
	default:
	}
	return n, err
}

func startServe(t *testing.T, b arcaBin, config, sent string) *serveProc {
	t.Helper()
	p := &serveProc{cmd: b.command("serve", "--config", config), out: watchedBuffer{wrote: make(chan struct{}, 1)}}
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.errOut
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.cmd.Process.Kill() })
	if _, err := io.WriteString(p.stdin, sent); err != nil {
		t.Fatal(err)
	}
	return p
}

// waitFor waits until stdout holds s, looking again after each write.
func (p *serveProc) waitFor(t *testing.T, s string) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for !bytes.Contains(p.out.Bytes(), []byte(s)) {
		select {
		case <-p.out.wrote:
		case <-timeout:
			t.Fatalf("serve wrote no %s; stderr:\n%s", s, p.errOut.Bytes())
		}
	}
}

// wait waits for serve to exit, which it must with status 1 of its own,
// and returns what it wrote.
func (p *serveProc) wait(t *testing.T) transcript {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
		t.Fatalf("serve did not exit after the signal; stderr:\n%s", p.errOut.Bytes())
	}
	p.stdin.Close()
	ws := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ws.Signaled() || ws.ExitStatus() != 1 {
		t.Errorf("serve exited with %v (signaled %v), want exit status 1", err, ws.Signaled())
	}
	tr := transcript{rawOut: p.out.Bytes(), rawErr: p.errOut.Bytes(), err: err}
	tr.stdout, tr.stderr = splitLines(t, "stdout", tr.rawOut), splitLines(t, "stderr", tr.rawErr)
	return tr
}

// waitForPID waits until file holds a pid and a newline, and returns it.
func waitForPID(t *testing.T, file string) int {
	t.Helper()
	pid, err := readPID(file)
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// readPID is waitForPID for any goroutine. It polls the file: the PDP is
// another process, and the file is all it says of where it is.
func readPID(file string) (int, error) {
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, _ := os.ReadFile(file)
		if s, ok := strings.CutSuffix(string(b), "\n"); ok {
			pid, err := strconv.Atoi(s)
			if err != nil {
				return 0, fmt.Errorf("%s holds %q", file, b)
			}
			return pid, nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("the PDP never wrote %s", file)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// wantPDPGone fails t if the PDP recorded in dir, its grandchild, or
// anything else of its process group still runs. SIGKILL is delivered
// asynchronously, so it allows the kernel a moment, polling /proc: the
// grandchild is no child of this process, and its end sends it no event.
// Zombies count as gone (a container's init may never reap orphans).
func wantPDPGone(t *testing.T, dir string) {
	t.Helper()
	pgid := waitForPID(t, filepath.Join(dir, "pdp"))
	grandchild := waitForPID(t, filepath.Join(dir, "grandchild"))
	deadline := time.Now().Add(5 * time.Second)
	for {
		live := liveMembers(pgid)
		if syscall.Kill(-pgid, 0) == syscall.ESRCH || len(live) == 0 && !alive(grandchild) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes %v of the PDP's group %d survived serve (grandchild %d alive: %v)", live, pgid, grandchild, alive(grandchild))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// alive reports whether pid runs (is neither gone nor a zombie).
func alive(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	state, _, ok := statFields(stat)
	return ok && state != "Z" && state != "X"
}

// liveMembers lists the pids whose process group is pgid and which are not
// zombies.
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
		if state, group, ok := statFields(stat); ok && group == pgid && state != "Z" && state != "X" {
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

// sq quotes s as one sh word.
func sq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestLineReadAfterStopNeverRuns: a line whose read returns after the
// session was told to stop (its ctx cancelled while the loop was reading)
// is not run, however the loop and the stop race for the session: the put
// it carries never reaches the vault.
func TestLineReadAfterStopNeverRuns(t *testing.T) {
	f := newFixture(t)
	put := lines(`{"id":2,"op":"put","ref":"arca://app/late","value":"v"}`)
	for i := range 30 {
		f.spy.reset()
		ctx, cancel := context.WithCancel(context.Background())
		in := &cancelOnRead{first: lines(`{"id":1,"op":"list"}`), then: put, cancel: cancel}
		tr := f.session(t, sessionOpts{stdin: in, sent: []byte(in.first), ctx: ctx, interrupted: true})
		if tr.err == nil {
			t.Fatalf("round %d: Serve returned nil after its ctx was cancelled", i)
		}
		f.spy.mu.Lock()
		applied := f.spy.calls["apply"]
		f.spy.mu.Unlock()
		if applied != 0 {
			t.Fatalf("round %d: a put read after the stop reached the vault", i)
		}
		checkReplies(t, tr, []want{ok("1")})
	}
}

// cancelOnRead gives first, then, on the next read, cancels and gives then.
type cancelOnRead struct {
	first, then string
	cancel      func()
	reads       int
}

func (r *cancelOnRead) Read(p []byte) (int, error) {
	r.reads++
	switch r.reads {
	case 1:
		return copy(p, r.first), nil
	case 2:
		r.cancel()
		return copy(p, r.then), nil
	}
	return 0, io.EOF
}
