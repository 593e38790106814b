package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arca-secrets/arca/audit"
)

// fakeServe is a stand-in for serve, a shell script: it starts, answers
// the manifest, and answers other requests by their ref: app/long with a
// response line over the cap, app/longevent with an event line over its
// cap first, app/stray with two responses, app/other with another id (a
// moment later), app/nullid and app/nullok with id null on an error and
// on a success, app/dupid with a second id, app/refused and app/broken with a value beside an error or
// a field of the wrong type; any other ref with a get result.
const fakeServe = `#!/bin/sh
printf '{"v":1,"ts":"2026-11-30T08:14:14.381353202Z","seq":1,"event":"start","message":"fake","source":"serve"}\n' >&2
big() { head -c "$1" /dev/zero | tr '\0' a; }
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed 's/^{"id":\([0-9]*\),.*/\1/')
  get='"ok":true,"result":{"ref":"arca://app/db","env":"default","value":"v","version":1,"created_at":"2026-11-30T08:14:14.381353202Z","updated_at":"2026-11-30T08:14:14.381353202Z"}}'
  case "$line" in
  *'"op":"manifest"'*) printf '{"id":%s,"ok":true,"result":{"protocol":"arca-serve/1"}}\n' "$id" ;;
  *'arca://app/long"'*) big 9000000; echo ;;
  *'arca://app/longevent"'*) big 5000000 >&2; echo >&2; printf '{"id":%s,%s\n' "$id" "$get" ;;
  *'arca://app/stray"'*) printf '{"id":%s,%s\n{"id":%s,%s\n' "$id" "$get" "$id" "$get" ;;
  *'arca://app/other"'*) sleep 0.3; printf '{"id":1%s,%s\n' "$id" "$get" ;;
  *'arca://app/nullid"'*) printf '{"id":null,"ok":false,"error":{"code":"bad_request","message":"request is not valid JSON (at byte 3)"}}\n' ;;
  *'arca://app/nullok"'*) printf '{"id":null,%s\n' "$get" ;;
  *'arca://app/dupid"'*) printf '{"id":%s,"ok":true,"id":9%s,"result":{}}\n' "$id" "$id" ;;
  *'arca://app/refused"'*) printf '{"id":%s,"ok":false,"error":{"code":"denied","message":"m"},"result":{"value":"leak"}}\n' "$id" ;;
  *'arca://app/broken"'*) printf '{"id":%s,"ok":true,"result":{"value":"leak","version":"x"}}\n' "$id" ;;
  *) printf '{"id":%s,%s\n' "$id" "$get" ;;
  esac
done
`

func startFake(t *testing.T, onEvent func(audit.Event, error)) *Client {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "fake-arca")
	if err := os.WriteFile(bin, []byte(fakeServe), 0o755); err != nil {
		t.Fatal(err)
	}
	return start(t, Options{Binary: bin, Environ: []string{"PATH=" + os.Getenv("PATH")}, Dir: dir, OnEvent: onEvent})
}

// A response line over the cap fails its call, not the client: the lines
// after it still pair by position.
func TestLongResponseLine(t *testing.T) {
	c := startFake(t, nil)
	ctx := context.Background()
	if _, err := c.Get(ctx, Request{Ref: "arca://app/long"}); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("a response over the cap: %v", err)
	}
	if g, err := c.Get(ctx, Request{Ref: "arca://app/db"}); err != nil || string(g.Value.Reveal()) != "v" {
		t.Fatalf("the call after it: %v", err)
	}
}

// A call that fails returns no value, whatever the line beside the error
// held.
func TestFailedCallHoldsNoValue(t *testing.T) {
	c := startFake(t, nil)
	for _, ref := range []string{"arca://app/refused", "arca://app/broken"} {
		g, err := c.Get(context.Background(), Request{Ref: ref})
		if err == nil || g.Value.Len() != 0 || g.Value.Reveal() != nil {
			t.Fatalf("get %s: %v, and a value of %d bytes", ref, err, g.Value.Len())
		}
	}
}

// An event line over the cap is reported to OnEvent, and the stream and
// the calls go on.
func TestLongEventLine(t *testing.T) {
	var mu sync.Mutex
	var errs []error
	c := startFake(t, func(_ audit.Event, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			errs = append(errs, err)
		}
	})
	ctx := context.Background()
	for _, ref := range []string{"arca://app/longevent", "arca://app/db"} {
		if _, err := c.Get(ctx, Request{Ref: ref}); err != nil {
			t.Fatalf("get %s: %v", ref, err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "longer than") {
		t.Fatalf("the errors of the stream: %v", errs)
	}
}

// A response with another id means the streams are out of step: its call
// and the call pending behind it fail with ErrClosed saying so, serve is
// killed, and every later call fails with ErrClosed.
func TestOutOfStep(t *testing.T) {
	c := startFake(t, nil)
	ctx := context.Background()
	first := make(chan error, 1)
	go func() {
		_, err := c.Get(ctx, Request{Ref: "arca://app/other"})
		first <- err
	}()
	waitFor(t, "the first call to be queued", func() bool {
		c.qmu.Lock()
		defer c.qmu.Unlock()
		return c.queue.n == 1
	})
	_, behind := c.Get(ctx, Request{Ref: "arca://app/db"})
	for what, err := range map[string]error{"the call answered with another id": <-first, "the call behind it": behind} {
		if !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), "the response to request 2 carries id 12: the wire is out of step") {
			t.Fatalf("%s: %v", what, err)
		}
	}
	wantSessionEnded(t, c)
}

// A second id further in the line, which the reader's look at the line's
// start does not see, is found by the call: it ends the session the same
// way.
func TestOutOfStepFoundByTheCall(t *testing.T) {
	c := startFake(t, nil)
	ctx := context.Background()
	if _, err := c.Get(ctx, Request{Ref: "arca://app/dupid"}); !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), "carries id 92: the wire is out of step") {
		t.Fatalf("a response with a second id: %v", err)
	}
	wantSessionEnded(t, c)
}

// A response no request waits for ends the client the same way, and Close
// does not hang.
func TestStrayResponse(t *testing.T) {
	c := startFake(t, nil)
	ctx := context.Background()
	if _, err := c.Get(ctx, Request{Ref: "arca://app/stray"}); err != nil {
		t.Fatalf("the call answered twice: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	var err error
	for time.Now().Before(deadline) {
		// A call queued before the stray line came gets it, out of step.
		if _, err = c.Get(ctx, Request{Ref: "arca://app/db"}); errors.Is(err, ErrClosed) {
			break
		}
	}
	if !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), "out of step") {
		t.Fatalf("a call after a stray response: %v", err)
	}
	done := make(chan struct{})
	go func() { c.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close hangs after the wire went out of step")
	}
}

// "id":null on an error is serve's answer to a line whose id it could not
// read: the head call's, not out of step. On a success it is out of step.
func TestNullIDAnswersTheHead(t *testing.T) {
	c := startFake(t, nil)
	ctx := context.Background()
	_, err := c.Get(ctx, Request{Ref: "arca://app/nullid"})
	wantCode(t, "a call answered with id null", err, "bad_request")
	if g, err := c.Get(ctx, Request{Ref: "arca://app/db"}); err != nil || string(g.Value.Reveal()) != "v" {
		t.Fatalf("the call after it: %v", err)
	}
	if _, err := c.Get(ctx, Request{Ref: "arca://app/nullok"}); !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), "carries id null: the wire is out of step") {
		t.Fatalf("a success with id null: %v", err)
	}
}

// The same through serve: a line over serve's 4 MiB cap is answered with
// id null, and the session goes on.
func TestOverlongRequestLine(t *testing.T) {
	c := start(t, home(t, ""))
	ctx := context.Background()
	_, err := c.Put(ctx, Request{Ref: "arca://app/db", Value: []byte(strings.Repeat(canary, (5<<20)/len(canary)))})
	wantCode(t, "a put over the line cap", err, "bad_request")
	if strings.Contains(err.Error(), canary) {
		t.Fatalf("the error quotes the value: %.200s", err)
	}
	if _, err := c.Put(ctx, Request{Ref: "arca://app/db", Value: []byte("v")}); err != nil {
		t.Fatalf("the put after it: %v", err)
	}
}

// Calls cancelled at random points, many at once: the slots they leave
// are reused, and every call that returns a result returns its own.
func TestCancelledSlotsAreReused(t *testing.T) {
	o := home(t, "")
	o.MaxInFlight = 16
	c := start(t, o)
	ctx := context.Background()
	for i := range 8 {
		if _, err := c.Put(ctx, Request{Ref: fmt.Sprintf("arca://app/k%d", i), Value: []byte(fmt.Sprintf("v%d", i))}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var bad []string
	var ok, cancelled int
	for g := range 32 {
		wg.Go(func() {
			for n := range 200 {
				i := (g + n) % 8
				cctx, cancel := context.WithTimeout(ctx, time.Duration(rand.IntN(400))*time.Microsecond)
				got, err := c.Get(cctx, Request{Ref: fmt.Sprintf("arca://app/k%d", i)})
				cancel()
				mu.Lock()
				switch {
				case errors.Is(err, context.DeadlineExceeded):
					cancelled++
				case err != nil:
					bad = append(bad, err.Error())
				case string(got.Value.Reveal()) != fmt.Sprintf("v%d", i):
					bad = append(bad, fmt.Sprintf("k%d got the value of another ref", i))
				default:
					ok++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(bad) > 0 {
		t.Fatalf("%d calls went wrong, the first: %s", len(bad), bad[0])
	}
	if cancelled == 0 {
		t.Fatalf("no call was cancelled (%d returned): the test proves nothing", ok)
	}
	for i := range 8 { // and the client is still in step
		got, err := c.Get(ctx, Request{Ref: fmt.Sprintf("arca://app/k%d", i)})
		if err != nil || string(got.Value.Reveal()) != fmt.Sprintf("v%d", i) {
			t.Fatalf("after the cancellations: k%d: %v", i, err)
		}
	}
}

// The line reader: lines up to its cap whole, gathered past its buffer
// too, without their newline; a longer one skipped and reported, the
// stream going on after it; a last line without its newline dropped.
func TestLineReader(t *testing.T) {
	const max = 100 << 10
	long := func(n int, c string) string { return strings.Repeat(c, n) + "\n" }
	in := "short\n" + long(70<<10, "a") + long(max, "b") + long(max+1, "c") + long(3*max, "d") + "after\n" + "cut"
	lr := newLineReader(strings.NewReader(in), max)
	for _, want := range []string{"short", strings.Repeat("a", 70<<10), strings.Repeat("b", max), "!long", "!long", "after", "!eof"} {
		line, err := lr.next()
		got := string(line)
		switch {
		case errors.Is(err, errLong):
			got = "!long"
		case errors.Is(err, io.EOF):
			got = "!eof"
		case err != nil:
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("got %.20q (%d bytes), want %.20q (%d bytes)", got, len(got), want, len(want))
		}
	}
}

// A call whose context has already ended sends nothing: a put is not made.
func TestEndedContextSendsNothing(t *testing.T) {
	c := start(t, home(t, ""))
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	for range 20 {
		if _, err := c.Put(ended, Request{Ref: "arca://app/db", Value: []byte("v")}); !errors.Is(err, context.Canceled) {
			t.Fatalf("a put with an ended context: %v", err)
		}
	}
	if _, err := c.Get(context.Background(), Request{Ref: "arca://app/db"}); err == nil {
		t.Fatal("a put with an ended context was made")
	} else {
		wantCode(t, "get after the puts that were not sent", err, "not_found")
	}
}

// wantSessionEnded: serve was stopped when the wire went out of step, and
// a later call fails at once.
func wantSessionEnded(t *testing.T, c *Client) {
	t.Helper()
	select {
	case <-c.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("serve was not stopped when the wire went out of step")
	}
	if _, err := c.Get(context.Background(), Request{Ref: "arca://app/db"}); !errors.Is(err, ErrClosed) {
		t.Fatalf("a call after the wire went out of step: %v", err)
	}
}
