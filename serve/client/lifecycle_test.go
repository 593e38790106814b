package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Close honours CloseTimeout when serve is stalled with writes pending:
// serve stopped (SIGSTOP), 200 puts of 60 KB queued behind a full pipe.
// Close kills serve at the deadline, which fails the blocked write, and
// every put returns ErrClosed.
func TestCloseHonoursTimeout(t *testing.T) {
	o := home(t, "")
	o.CloseTimeout = time.Second
	c := start(t, o)
	t.Cleanup(func() { c.cmd.Process.Kill() }) // a Close that hangs leaves serve stopped
	if err := c.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	value := bytes.Repeat([]byte("v"), 60<<10)
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for i := range 200 {
		wg.Go(func() {
			_, err := c.Put(context.Background(), Request{Ref: fmt.Sprintf("arca://app/k%d", i), Value: value})
			errs <- err
		})
	}
	waitFor(t, "the puts to be queued", func() bool {
		c.qmu.Lock()
		defer c.qmu.Unlock()
		return c.queue.n == 200
	})
	began := time.Now()
	closed := make(chan error, 1)
	go func() { closed <- c.Close() }()
	select {
	case err := <-closed:
		if err == nil || !strings.Contains(err.Error(), "killed") {
			t.Fatalf("Close of a stalled serve: %v", err)
		}
	case <-time.After(o.CloseTimeout + 4*time.Second):
		t.Fatalf("Close was still blocked after %v, with CloseTimeout %v", time.Since(began), o.CloseTimeout)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("puts hang after Close")
	}
	close(errs)
	for err := range errs {
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("a put pending at Close: %v", err)
		}
	}
}

// waitFor polls cond until it holds, failing the test after a generous
// bound.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10 s for %s", what)
		}
	}
}

// script is the options that spawn a stand-in for serve, the shell script
// body, in a directory of its own (its working directory).
func script(t *testing.T, body string) Options {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "fake-arca")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return Options{Binary: bin, Environ: []string{"PATH=" + os.Getenv("PATH")}, Dir: dir}
}

const startEvent = `{"v":1,"ts":"2026-11-30T08:14:14.381353202Z","seq":1,"event":"start","message":"fake","source":"serve"}`

// Start is bounded by StartTimeout as a whole: a serve that writes its
// start event and never answers the manifest fails Start at the deadline.
func TestStartTimeoutCoversTheManifest(t *testing.T) {
	o := script(t, "printf '%s\\n' '"+startEvent+"' >&2\nwhile read -r line; do :; done\n")
	o.StartTimeout = time.Second
	type result struct {
		c   *Client
		err error
	}
	done := make(chan result, 1)
	go func() {
		c, err := Start(context.Background(), o)
		done <- result{c, err}
	}()
	select {
	case r := <-done:
		if r.err == nil {
			r.c.Close()
			t.Fatal("Start succeeded against a serve that never answers")
		}
		if !errors.Is(r.err, context.DeadlineExceeded) || !strings.Contains(r.err.Error(), "manifest") {
			t.Fatalf("Start against a serve that never answers: %v", r.err)
		}
	case <-time.After(o.StartTimeout + 5*time.Second):
		t.Fatal("Start hangs when serve never answers the manifest")
	}
}

// stderr closing before the start event: Start reports serve's exit
// status, or that it still runs (and then kills it).
func TestEndedBeforeStart(t *testing.T) {
	for body, want := range map[string]string{
		"exit 3\n":                              "(its stderr closed; exit status 3)",
		"kill -9 $$\n":                          "(its stderr closed; signal: killed)",
		"exec 2>&-\nexec sleep 30\n":            "(its stderr closed; still running)",
		"exec 2>/dev/null\nsleep 0.1\nexit 0\n": "(its stderr closed; exit status 0)",
	} {
		o := script(t, body)
		o.StartTimeout, o.CloseTimeout = 5*time.Second, time.Second
		_, err := Start(context.Background(), o)
		if err == nil || !strings.Contains(err.Error(), "ended before its start event "+want) {
			t.Errorf("%q: %v", body, err)
		}
	}
}
