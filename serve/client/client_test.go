package client

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/manifest"
)

// arcaBin is the arca binary the tests spawn: $ARCA_BIN, else built once.
var arcaBin string

func TestMain(m *testing.M) {
	if bin := os.Getenv("ARCA_BIN"); bin != "" {
		var err error
		if arcaBin, err = filepath.Abs(bin); err != nil { // serve runs in other directories
			panic(err)
		}
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "arca-client-test-")
	if err != nil {
		panic(err)
	}
	arcaBin = filepath.Join(dir, "arca")
	if out, err := exec.Command("go", "build", "-o", arcaBin, "../../cmd/arca").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build arca: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// home is a fresh HOME with an initialized vault, and a config file there
// holding toml; it returns the options that spawn serve on it.
func home(t *testing.T, toml string) Options { return homeTB(t, toml) }

func start(t *testing.T, o Options) *Client {
	t.Helper()
	c, err := Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Code != code {
		t.Fatalf("%s: %v, want code %s", what, err, code)
	}
}

// Every op, typed, and the errors with their wire codes.
func TestOps(t *testing.T) {
	c := start(t, home(t, ""))
	ctx := context.Background()
	p, err := c.Put(ctx, Request{Ref: "arca://app/db", Value: []byte("s3cret")})
	if err != nil || !p.Created || p.Version != 1 || p.Env != "default" || p.CreatedAt.IsZero() {
		t.Fatalf("put: %+v, %v", p, err)
	}
	g, err := c.Get(ctx, Request{Ref: "arca://app/db", Actor: "agent:test"})
	if err != nil || string(g.Value.Reveal()) != "s3cret" || g.Version != 1 || fmt.Sprint(g.Value) != "<redacted>" {
		t.Fatalf("get: %+v, %v", g, err)
	}
	r, err := c.Rotate(ctx, Request{Ref: "arca://app/db", Value: []byte("n3w")})
	if err != nil || r.Version != 2 || r.RotatedAt.IsZero() {
		t.Fatalf("rotate: %+v, %v", r, err)
	}
	l, err := c.List(ctx, Request{})
	if err != nil || len(l.Records) != 1 || l.Records[0].Ref != "arca://app/db" || l.Records[0].Version != 2 {
		t.Fatalf("list: %+v, %v", l, err)
	}
	k, err := c.Check(ctx, Request{})
	if err != nil || !k.Healthy || k.Records != 1 || k.Kind != "file" {
		t.Fatalf("check: %+v, %v", k, err)
	}
	m, err := c.Manifest(ctx)
	if err != nil || m.Protocol != "arca-serve/1" || m.DefaultEnv != "default" || len(m.Ops) != len(manifest.Ops()) {
		t.Fatalf("manifest: %+v, %v", m, err)
	}
	if !slices.Contains(m.ErrorCodes, "not_found") || !slices.Contains(m.ErrorCodes, "pdp_unreachable") || !slices.Contains(m.CLIOnly, "run") {
		t.Fatalf("manifest: error codes %q, CLI-only verbs %q", m.ErrorCodes, m.CLIOnly)
	}
	// Any op by name, its result as a map: one this client has no method for.
	got, err := Call[map[string]any](ctx, c, "get", Request{Ref: "arca://app/db"})
	if err != nil || got["value"] != "n3w" || got["env"] != "default" {
		t.Fatalf("Call get into a map: %v", err)
	}
	_, err = Call[map[string]any](ctx, c, "nope", Request{})
	wantCode(t, "an op serve does not have", err, "unknown_op")
	rm, err := c.Rm(ctx, Request{Ref: "arca://app/db"})
	if err != nil || rm.Version != 2 {
		t.Fatalf("rm: %+v, %v", rm, err)
	}
	_, err = c.Get(ctx, Request{Ref: "arca://app/db"})
	wantCode(t, "get of what was removed", err, "not_found")
	_, err = c.Put(ctx, Request{Ref: "arca://bad ref", Value: []byte("x")})
	wantCode(t, "a bad ref", err, "bad_request")
	_, err = c.Get(ctx, Request{Ref: "arca://app/db", Env: "nope"})
	wantCode(t, "an unknown env", err, "bad_request")
	if err := c.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("close after shutdown: %v", err)
	}
	if _, err := c.Get(ctx, Request{Ref: "arca://app/db"}); !errors.Is(err, ErrClosed) {
		t.Fatalf("a call after close: %v", err)
	}
}

// 1,000 gets from 20 goroutines, pipelined: each gets its own value.
func TestPipelinedConcurrent(t *testing.T) {
	o := home(t, "")
	o.MaxInFlight = 32
	c := start(t, o)
	ctx := context.Background()
	for i := range 10 {
		if _, err := c.Put(ctx, Request{Ref: fmt.Sprintf("arca://app/k%d", i), Value: []byte(fmt.Sprintf("v%d", i))}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	for g := range 20 {
		wg.Go(func() {
			for n := range 50 {
				i := (g + n) % 10
				got, err := c.Get(ctx, Request{Ref: fmt.Sprintf("arca://app/k%d", i)})
				if err == nil && string(got.Value.Reveal()) != fmt.Sprintf("v%d", i) {
					err = fmt.Errorf("k%d: got %q", i, got.Value.Reveal())
				}
				if err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// slowPDP is a config whose PDP takes delay to allow anything.
func slowPDP(delay string) string {
	return "[serve.pdp]\nexec = \"sleep " + delay + "; echo '{\\\"allow\\\": true}'\"\n"
}

// A call whose context ends returns at once; its response, when it comes,
// is dropped, and the next call gets its own.
func TestCancelKeepsTheSlot(t *testing.T) {
	o := home(t, slowPDP("0.3"))
	c := start(t, o)
	ctx := context.Background()
	for _, kv := range [][2]string{{"a", "va"}, {"b", "vb"}} {
		if _, err := c.Put(ctx, Request{Ref: "arca://app/" + kv[0], Value: []byte(kv[1])}); err != nil {
			t.Fatal(err)
		}
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	began := time.Now()
	if _, err := c.Get(short, Request{Ref: "arca://app/a"}); !errors.Is(err, context.DeadlineExceeded) || time.Since(began) > 250*time.Millisecond {
		t.Fatalf("the cancelled call: %v after %v", err, time.Since(began))
	}
	got, err := c.Get(ctx, Request{Ref: "arca://app/b"})
	if err != nil || string(got.Value.Reveal()) != "vb" {
		t.Fatalf("the call after it: %q, %v", got.Value.Reveal(), err)
	}
}

// serve killed with calls in flight: each call fails with ErrClosed, none
// hangs.
func TestKilledInFlight(t *testing.T) {
	c := start(t, home(t, slowPDP("0.5")))
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 10)
	for range 10 {
		wg.Go(func() {
			_, err := c.List(ctx, Request{})
			errs <- err
		})
	}
	time.Sleep(100 * time.Millisecond)
	c.cmd.Process.Kill()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("calls hang after serve was killed")
	}
	close(errs)
	for err := range errs {
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("a call in flight when serve was killed: %v", err)
		}
	}
}

// A config that cannot start: Start returns serve's own stop message.
func TestCannotStart(t *testing.T) {
	o := home(t, "")
	o.Config = filepath.Join(o.Dir, "missing.toml")
	_, err := Start(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "cannot start: config") || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("Start with a missing config: %v", err)
	}
	o.Binary = filepath.Join(o.Dir, "no-such-arca")
	if _, err := Start(context.Background(), o); err == nil {
		t.Fatal("Start of a binary that is not there succeeded")
	}
}

// The audit stream, checked, paired with the responses by id: one event a
// request, and two for a put whose commit failed (ok, then error).
func TestEventsPairWithResponses(t *testing.T) {
	o := home(t, "")
	var mu sync.Mutex
	var events []audit.Event
	var streamErrs []error
	o.OnEvent = func(e audit.Event, err error) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, e)
		if err != nil {
			streamErrs = append(streamErrs, err)
		}
	}
	c := start(t, o)
	ctx := context.Background()
	if _, err := c.Put(ctx, Request{Ref: "arca://app/db", Value: []byte("v1")}); err != nil {
		t.Fatal(err)
	}
	// A directory where the vault's temp file goes: the commit fails after
	// the event was written.
	tmp := filepath.Join(o.Dir, ".local", "share", "arca", "default.vault.tmp", "x")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := c.Put(ctx, Request{Ref: "arca://app/db", Value: []byte("v2")})
	wantCode(t, "a put whose commit fails", err, "op_error")
	os.RemoveAll(filepath.Dir(tmp))
	if _, err := c.Get(ctx, Request{Ref: "arca://app/db"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(streamErrs) > 0 {
		t.Fatalf("the stream broke: %v", streamErrs)
	}
	byID := map[string][]string{}
	for _, e := range events {
		if len(e.ID) > 0 {
			byID[string(e.ID)] = append(byID[string(e.ID)], e.Event+"/"+e.Outcome)
		}
	}
	// ids: 1 the manifest of Start, 2 the put, 3 the failed put, 4 the get.
	want := map[string]string{"1": "manifest/ok", "2": "put/ok", "3": "put/ok error/error", "4": "get/ok"}
	for id, w := range want {
		if got := strings.Join(byID[id], " "); got != w {
			t.Errorf("events of request %s: %q, want %q", id, got, w)
		}
	}
	if events[0].Event != "start" || events[len(events)-1].Event != "stop" {
		t.Errorf("the stream does not run from start to stop: %+v", events)
	}
}

// A PDP's verdicts reach the caller: denied carries the policy and its
// reason; a PDP that fails is pdp_unreachable, with no policy; a failed
// Resolve names the variable and ref it was for and keeps the *Error.
func TestPolicyErrors(t *testing.T) {
	deny := "[serve.pdp]\nexec = \"echo '{\\\"allow\\\": false, \\\"reason\\\": \\\"not on fridays\\\"}'\"\n"
	o := home(t, deny)
	c := start(t, o)
	ctx := context.Background()
	_, err := c.Get(ctx, Request{Ref: "arca://app/db"})
	wantCode(t, "a get the PDP denies", err, "denied")
	var e *Error
	errors.As(err, &e)
	if e.Policy == nil || e.Policy.Allow || e.Policy.Reason != "not on fridays" {
		t.Fatalf("the denial's policy: %+v", e.Policy)
	}
	_, err = c.Resolve(ctx, map[string]string{"B": "arca://app/b", "A": "arca://app/a"}, Request{})
	wantCode(t, "a resolve the PDP denies", err, "denied")
	if !strings.HasPrefix(err.Error(), "A (arca://app/a): ") {
		t.Fatalf("a failed resolve: %v", err)
	}
	m, err := c.Manifest(ctx)
	if err != nil || !m.PDPConfigured || !m.Has("audit_chain") || m.Has("no_such_capability") {
		t.Fatalf("manifest: %+v, %v", m, err)
	}

	c = start(t, home(t, "[serve.pdp]\nexec = \"exit 3\"\n"))
	_, err = c.List(ctx, Request{})
	wantCode(t, "a list whose PDP fails", err, "pdp_unreachable")
	errors.As(err, &e)
	if e.Policy != nil {
		t.Fatalf("pdp_unreachable carries a policy: %+v", e.Policy)
	}
}

// Secrets.Environ is NAME=value, sorted by name.
func TestSecretsEnviron(t *testing.T) {
	o := home(t, "")
	c := start(t, o)
	ctx := context.Background()
	for ref, v := range map[string]string{"arca://app/x": "vx", "arca://app/y": "v y"} {
		if _, err := c.Put(ctx, Request{Ref: ref, Value: []byte(v)}); err != nil {
			t.Fatal(err)
		}
	}
	s, err := c.Resolve(ctx, map[string]string{"Y": "arca://app/y", "X": "arca://app/x"}, Request{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.Environ(), "|"); got != "X=vx|Y=v y" {
		t.Fatalf("Environ: %q", got)
	}
	if fmt.Sprint(s) != "map[X:<redacted> Y:<redacted>]" {
		t.Fatalf("Secrets print as %s", fmt.Sprint(s))
	}
}

// serve's last lines, written as it exits, reach the client before Close
// returns: here a stand-in that answers shutdown, writes 2,000 events
// (some 200 KB, more than a pipe holds) and exits at once. Read through
// cmd's own pipes, which Wait closes as soon as the process is gone, the
// tail of them was lost.
func TestLastLinesArrive(t *testing.T) {
	const script = `#!/bin/sh
ev() { printf '{"v":1,"ts":"2026-11-30T08:14:14.381353202Z","seq":%s,"event":"%s","message":"m","source":"serve"}\n' "$1" "$2"; }
ev 1 start >&2
read -r line; printf '{"id":1,"ok":true,"result":{"protocol":"arca-serve/1"}}\n'
read -r line; printf '{"id":2,"ok":true,"result":{}}\n'
i=2; while [ $i -le 2001 ]; do ev $i warning; i=$((i+1)); done >&2
exit 0
`
	dir := t.TempDir()
	bin := filepath.Join(dir, "fake-arca")
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		var mu sync.Mutex
		seen := 0
		var streamErr error
		onEvent := func(e audit.Event, err error) {
			mu.Lock()
			defer mu.Unlock()
			seen++
			if err != nil && streamErr == nil {
				streamErr = err
			}
		}
		c, err := Start(context.Background(), Options{Binary: bin, Environ: []string{"PATH=" + os.Getenv("PATH")}, Dir: dir, OnEvent: onEvent})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Shutdown(context.Background()); err != nil {
			t.Fatalf("round %d: shutdown: %v", i, err)
		}
		if err := c.Close(); err != nil {
			t.Fatalf("round %d: close: %v", i, err)
		}
		mu.Lock()
		if seen != 2001 || streamErr != nil {
			t.Fatalf("round %d: the client saw %d of 2001 events (%v)", i, seen, streamErr)
		}
		mu.Unlock()
	}
}
