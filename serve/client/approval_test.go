package client

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// approvalLine is serve's answer to a request a human must approve.
const approvalLine = `{"id":7,"ok":false,"error":{"code":"approval_required","message":"approval required: a caller that names no actor asks to get app/db in env default","details":{"approval":{"id":"ap_2e2e07a12d71a020ed599842a201b06d","summary":"a caller that names no actor asks to get app/db in env default","fingerprint":"4553c33cc7709cb9af3514ab7ab5bb5f8699bd0971eb149e0f2998dd840c8108","expires_at":"2099-01-01T00:15:00.000000000Z","url":"http://127.0.0.1:7777/approvals/ap_2e2e07a12d71a020ed599842a201b06d"}}},"policy":{"allow":false,"reason":"prod","obligations":["arca:approval"]}}`

// An approval_required error is an *ApprovalRequired carrying the
// approval, by both paths, and the *Error beneath it stays reachable.
func TestApprovalRequiredError(t *testing.T) {
	if diff, _ := differAll([]byte(approvalLine), []byte("7")); diff != "" {
		t.Fatal(diff)
	}
	var g Got
	err := decode([]byte(approvalLine), sent{id: []byte("7")}, &g)
	var ar *ApprovalRequired
	if !errors.As(err, &ar) {
		t.Fatalf("approval_required: %T %v, want *ApprovalRequired", err, err)
	}
	want := Approval{
		ID:          "ap_2e2e07a12d71a020ed599842a201b06d",
		Summary:     "a caller that names no actor asks to get app/db in env default",
		Fingerprint: "4553c33cc7709cb9af3514ab7ab5bb5f8699bd0971eb149e0f2998dd840c8108",
		ExpiresAt:   time.Date(2099, 1, 1, 0, 15, 0, 0, time.UTC),
		URL:         "http://127.0.0.1:7777/approvals/ap_2e2e07a12d71a020ed599842a201b06d",
	}
	if ar.Approval != want {
		t.Errorf("the approval: %+v, want %+v", ar.Approval, want)
	}
	var e *Error
	if !errors.As(err, &e) || e.Code != "approval_required" || e.Policy == nil || e.Policy.Reason != "prod" {
		t.Errorf("the *Error beneath: %+v", e)
	}
	if msg := err.Error(); msg != "arca serve: approval_required: approval required: a caller that names no actor asks to get app/db in env default (approval ap_2e2e07a12d71a020ed599842a201b06d)" {
		t.Errorf("the message: %s", msg)
	}
	// A denial is an *Error, as before.
	denied := `{"id":7,"ok":false,"error":{"code":"denied","message":"denied by policy","details":{"cause":"approval_mismatch"}}}`
	err = decode([]byte(denied), sent{id: []byte("7")}, &g)
	if errors.As(err, &ar) || !errors.As(err, &e) || e.Cause != "approval_mismatch" {
		t.Errorf("a denial: %T %v", err, err)
	}
}

// The new ops' lines carry what the request schema says: scope an object
// of integers, its zero members left out.
func TestApprovalRequests(t *testing.T) {
	all := true
	for _, c := range []struct {
		op   string
		r    Request
		want string
	}{
		{"approve", Request{Approval: "ap_1", Decision: "grant", Approver: "human:ana", Scope: &Scope{Uses: 5, TTLS: 600}}, `{"id":1,"op":"approve","approval":"ap_1","decision":"grant","scope":{"ttl_s":600,"uses":5},"approver":"human:ana"}`},
		{"approve", Request{Approval: "ap_1", Decision: "deny", Approver: "human:ana", Scope: &Scope{Uses: 1}}, `{"id":1,"op":"approve","approval":"ap_1","decision":"deny","scope":{"uses":1},"approver":"human:ana"}`},
		{"approve", Request{Approval: "ap_1", Decision: "grant", Approver: "h", Scope: &Scope{}}, `{"id":1,"op":"approve","approval":"ap_1","decision":"grant","scope":{},"approver":"h"}`},
		{"approval", Request{Approval: "ap_1"}, `{"id":1,"op":"approval","approval":"ap_1"}`},
		{"revoke", Request{All: &all}, `{"id":1,"op":"revoke","all":true}`},
		{"revoke", Request{Grant: "gr_1"}, `{"id":1,"op":"revoke","grant":"gr_1"}`},
		{"get", Request{Ref: "arca://app/db", Approval: "ap_1"}, `{"id":1,"op":"get","ref":"arca://app/db","approval":"ap_1"}`},
	} {
		if got := string(appendRequest(nil, []byte("1"), c.op, c.r)); got != c.want+"\n" {
			t.Errorf("%s: %s, want %s", c.op, got, c.want)
		}
	}
}

// approvalServe is a stand-in for serve: a get without an approval is
// answered approval_required (approvalLine's), one with it succeeds; each
// approval op is answered with the next state of the file states. Every
// request line is appended to requests.
const approvalServe = `printf '%s\n' '` + startEvent + `' >&2
while IFS= read -r line; do
  printf '%s\n' "$line" >> requests
  id=$(printf '%s' "$line" | sed 's/^{"id":\([0-9]*\),.*/\1/')
  case "$line" in
  *'"op":"manifest"'*) printf '{"id":%s,"ok":true,"result":{"protocol":"arca-serve/1"}}\n' "$id" ;;
  *'"op":"approval"'*)
    state=$(head -n 1 states); tail -n +2 states > states.next; mv states.next states
    printf '{"id":%s,"ok":true,"result":{"approval":"ap_2e2e07a12d71a020ed599842a201b06d","state":"%s"}}\n' "$id" "$state" ;;
  *'"approval":'*) printf '{"id":%s,"ok":true,"result":{"ref":"arca://app/db","env":"default","value":"s3cret","version":1,"created_at":"2026-11-30T08:14:14.381353202Z","updated_at":"2026-11-30T08:14:14.381353202Z"}}\n' "$id" ;;
  *) printf '%s\n' '` + approvalLine + `' | sed "s/\"id\":7/\"id\":$id/" ;;
  esac
done
`

// fakeClock is a clock whose sleeps move it on at once, recording each.
type fakeClock struct {
	now    time.Time
	sleeps []time.Duration
}

func (f *fakeClock) wait(interval time.Duration) ApprovalWait {
	return ApprovalWait{Interval: interval, Now: func() time.Time { return f.now }, Sleep: func(ctx context.Context, d time.Duration) error {
		f.sleeps = append(f.sleeps, d)
		f.now = f.now.Add(d)
		return ctx.Err()
	}}
}

// approvalSession starts approvalServe with the approval states given.
func approvalSession(t *testing.T, states ...string) (*Client, string) {
	o := script(t, approvalServe)
	if err := os.WriteFile(filepath.Join(o.Dir, "states"), []byte(strings.Join(states, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return start(t, o), filepath.Join(o.Dir, "requests")
}

// requestsAfterManifest is the request lines the session got, but the
// manifest, with their ids cut.
func requestsAfterManifest(t *testing.T, path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
		out = append(out, l[strings.Index(l, `"op"`):])
	}
	return out
}

func getWith(c *Client) func(ctx context.Context, approval string) (Got, error) {
	return func(ctx context.Context, approval string) (Got, error) {
		return c.Get(ctx, Request{Ref: "arca://app/db", Approval: approval})
	}
}

// WithApproval polls until the approval is approved, then retries with
// its id; it gives up on a denial and on expiry, and within the caller's
// deadline.
func TestWithApproval(t *testing.T) {
	t0 := time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)
	const ap = `"approval":"ap_2e2e07a12d71a020ed599842a201b06d"`
	t.Run("approved", func(t *testing.T) {
		c, log := approvalSession(t, "pending", "approved")
		clock := &fakeClock{now: t0}
		g, err := WithApproval(context.Background(), c, clock.wait(0), getWith(c))
		if err != nil || string(g.Value.Reveal()) != "s3cret" {
			t.Fatalf("WithApproval: %v", err)
		}
		want := []string{`"op":"get","ref":"arca://app/db"}`, `"op":"approval",` + ap + `}`, `"op":"approval",` + ap + `}`, `"op":"get","ref":"arca://app/db",` + ap + `}`}
		if got := requestsAfterManifest(t, log); !reflect.DeepEqual(got, want) {
			t.Errorf("requests:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if !reflect.DeepEqual(clock.sleeps, []time.Duration{time.Second}) {
			t.Errorf("slept %v, want one default interval", clock.sleeps)
		}
	})
	for _, state := range []string{StateDenied, StateExpired} {
		t.Run(state, func(t *testing.T) {
			c, log := approvalSession(t, "pending", state)
			clock := &fakeClock{now: t0}
			_, err := WithApproval(context.Background(), c, clock.wait(time.Minute), getWith(c))
			var d *ApprovalDenied
			if !errors.As(err, &d) || d.State != state || d.ID != "ap_2e2e07a12d71a020ed599842a201b06d" || !errors.Is(err, ErrNotApproved) {
				t.Fatalf("WithApproval: %v, want the approval %s", err, state)
			}
			if got := requestsAfterManifest(t, log); len(got) != 3 {
				t.Errorf("requests: %q, want no retry", got)
			}
		})
	}
	t.Run("past expires_at", func(t *testing.T) {
		c, _ := approvalSession(t, "pending", "pending", "pending", "pending", "pending", "pending", "approved")
		clock := &fakeClock{now: t0}
		_, err := WithApproval(context.Background(), c, clock.wait(4*time.Minute), getWith(c))
		var d *ApprovalDenied
		if !errors.As(err, &d) || d.State != StateExpired {
			t.Fatalf("WithApproval: %v, want expired", err)
		}
		if want := []time.Duration{4 * time.Minute, 4 * time.Minute, 4 * time.Minute, 3 * time.Minute}; !reflect.DeepEqual(clock.sleeps, want) {
			t.Errorf("slept %v, want %v: to expires_at and no further", clock.sleeps, want)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		c, log := approvalSession(t, "pending", "pending", "pending", "pending", "approved")
		clock := &fakeClock{now: t0}
		ctx, cancel := context.WithDeadline(context.Background(), t0.Add(2500*time.Millisecond))
		defer cancel()
		_, err := WithApproval(ctx, c, clock.wait(time.Second), getWith(c))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("WithApproval: %v, want the deadline", err)
		}
		if want := []time.Duration{time.Second, time.Second, 500 * time.Millisecond}; !reflect.DeepEqual(clock.sleeps, want) {
			t.Errorf("slept %v, want %v", clock.sleeps, want)
		}
		if got := requestsAfterManifest(t, log); len(got) != 5 {
			t.Errorf("requests: %q, want the get and four polls", got)
		}
	})
	t.Run("none asked", func(t *testing.T) {
		c, log := approvalSession(t)
		_, err := WithApproval(context.Background(), c, ApprovalWait{}, func(ctx context.Context, approval string) (Got, error) {
			return c.Get(ctx, Request{Ref: "arca://app/db", Approval: "ap_x"}) // a success, to the stand-in
		})
		if err != nil || len(requestsAfterManifest(t, log)) != 1 {
			t.Fatalf("a call no approval is asked for: %v, want its result and no poll", err)
		}
	})
}

// A value got under a grant is dropped at its expires_at: Fresh returns
// it before, and after wipes it and returns ErrExpired.
func TestFreshDropsAtExpiresAt(t *testing.T) {
	line := `{"id":7,"ok":true,"result":{"ref":"arca://app/db","env":"default","value":"s3cret","version":1,"created_at":"2026-11-30T08:14:14.381353202Z","updated_at":"2026-11-30T08:14:14.381353202Z","expires_at":"2026-11-30T08:24:14.381353202Z"},"policy":{"allow":true,"obligations":["arca:ttl=600"]}}`
	if diff, _ := differAll([]byte(line), []byte("7")); diff != "" {
		t.Fatal(diff)
	}
	var g Got
	if handled, err := fast([]byte(line), sent{id: []byte("7")}, &g); !handled || err != nil {
		t.Fatalf("the fast path: %v %v", handled, err)
	}
	end := time.Date(2026, 11, 30, 8, 24, 14, 381353202, time.UTC)
	if !g.ExpiresAt.Equal(end) {
		t.Fatalf("ExpiresAt %v", g.ExpiresAt)
	}
	buf := g.Value.Reveal()
	if s, err := g.FreshAt(end.Add(-time.Nanosecond)); err != nil || string(s.Reveal()) != "s3cret" {
		t.Fatalf("before expires_at: %v", err)
	}
	if s, err := g.FreshAt(end); !errors.Is(err, ErrExpired) || s.Len() != 0 || g.Value.Len() != 0 {
		t.Fatalf("at expires_at: %v, want ErrExpired and no value", err)
	}
	if string(buf) != "\x00\x00\x00\x00\x00\x00" {
		t.Errorf("the value's bytes were not wiped")
	}
	if _, err := g.Fresh(); !errors.Is(err, ErrExpired) {
		t.Errorf("Fresh after the drop: %v", err)
	}
	// No expires_at: no end.
	var open Got
	open.Value.Secret = g.Value.Secret
	if _, err := open.FreshAt(end.Add(1000 * time.Hour)); err != nil {
		t.Errorf("a value under no grant: %v", err)
	}
}

// approvalPDP is a PDP that allows a put and asks a human for a get; once
// one approved it allows it, for 60 seconds.
const approvalPDP = `jq -c 'if .op == "put" then {allow: true} elif .approval.state == "approved" then {allow: true, obligations: ["arca:ttl=60"]} else {allow: false, reason: "prod", obligations: ["arca:approval"]} end'`

// Against a real serve: the get is answered approval_required, the host
// approves it (on the first wait), the retry runs under a grant whose end
// the value carries, and revoke closes the grant.
func TestApprovalRoundTrip(t *testing.T) {
	c := start(t, home(t, "[serve.pdp]\nexec = "+quoteTOML(approvalPDP)+"\n"))
	ctx := context.Background()
	if _, err := c.Put(ctx, Request{Ref: "arca://app/db", Value: []byte("s3cret")}); err != nil {
		t.Fatal(err)
	}
	var asked *ApprovalRequired
	_, err := c.Get(ctx, Request{Ref: "arca://app/db"})
	if !errors.As(err, &asked) || !strings.HasPrefix(asked.ID, "ap_") || len(asked.Fingerprint) != 64 || asked.ExpiresAt.IsZero() {
		t.Fatalf("a get the PDP asks a human for: %v", err)
	}
	w := ApprovalWait{Sleep: func(ctx context.Context, d time.Duration) error {
		_, err := c.Approve(ctx, Request{Approval: asked.ID, Decision: "grant", Approver: "human:test", Scope: &Scope{Uses: 2}})
		return err
	}}
	g, err := WithApproval(ctx, c, w, func(ctx context.Context, approval string) (Got, error) {
		return c.Get(ctx, Request{Ref: "arca://app/db", Approval: approval})
	})
	if err != nil || string(g.Value.Reveal()) != "s3cret" || g.ExpiresAt.IsZero() {
		t.Fatalf("the approved get: %v, expires_at %v", err, g.ExpiresAt)
	}
	if _, err := g.FreshAt(g.ExpiresAt.Add(-time.Second)); err != nil {
		t.Errorf("the value before its grant ends: %v", err)
	}
	if _, err := g.FreshAt(g.ExpiresAt); !errors.Is(err, ErrExpired) {
		t.Errorf("the value as its grant ends: %v, want ErrExpired", err)
	}
	s, err := c.Approval(ctx, Request{Approval: asked.ID})
	if err != nil || s.State != StateApproved || s.Approver != "human:test" || s.Scope == nil || s.Scope.Uses != 2 {
		t.Fatalf("the approval's state: %+v, %v", s, err)
	}
	n, err := c.Revoke(ctx, Request{Ref: "arca://app/db"})
	if err != nil || n.Revoked != 1 {
		t.Fatalf("revoke: %+v, %v", n, err)
	}
}
