package ops

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/pdp"
)

// obligingPDP allows every request with the obligations it holds and
// keeps every request it was asked.
type obligingPDP struct {
	mu          sync.Mutex
	obligations []string
	deny        bool // answer allow false, with the obligations
	asked       []pdp.Request
}

func (p *obligingPDP) Decide(_ context.Context, req pdp.Request) (pdp.Verdict, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, req)
	return pdp.Verdict{Allow: !p.deny, Obligations: p.obligations}, nil
}

func (p *obligingPDP) Close() error { return nil }

// denying makes the PDP's next verdicts deny (or allow again).
func (p *obligingPDP) denying(deny bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.deny = deny
}

// set makes the PDP's next verdicts carry obligations.
func (p *obligingPDP) set(obligations ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.obligations = obligations
}

// last is the grant object of the last request asked.
func (p *obligingPDP) last(t *testing.T) *pdp.Grant {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.asked[len(p.asked)-1].Grant
}

// grantFixture is a fixture holding app/db and app/other, asking p, its
// clock at *now.
func grantFixture(t *testing.T, obligations ...string) (*fixture, *obligingPDP, *time.Time) {
	t.Helper()
	f := newFixture(t, "[serve.pdp]\nexec = \"true\"\ntimeout_ms = 1000\n")
	ctx := context.Background()
	for _, ref := range []string{"arca://app/db", "arca://app/other"} {
		if _, err := f.svc.Put(ctx, Request{Ref: ref, Value: secret("v")}); err != nil {
			t.Fatal(err)
		}
	}
	p := &obligingPDP{obligations: obligations}
	f.svc.decider = p
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f.svc.now = func() time.Time { return now }
	f.events.Reset()
	return f, p, &now
}

func getAs(f *fixture, actor, ref string) (GetResult, error) {
	return f.svc.Get(context.Background(), Request{Ref: ref, Actor: actor})
}

// TestGrantMaxUses: max_uses=3 lets three gets run, the fourth is denied
// grant_exhausted though the PDP allows it, and the PDP was asked all four
// times, seeing the grant's uses and state.
func TestGrantMaxUses(t *testing.T) {
	f, p, _ := grantFixture(t, "arca:max_uses=3")
	var id string
	for i := 1; i <= 3; i++ {
		r, err := getAs(f, "agent:a", "arca://app/db")
		if err != nil {
			t.Fatalf("get %d: %v", i, err)
		}
		if !r.ExpiresAt.IsZero() {
			t.Errorf("get %d under a grant without ttl: expires_at %v", i, r.ExpiresAt)
		}
		if i == 1 {
			if p.last(t) != nil {
				t.Fatalf("the first request's input has a grant: %+v", p.last(t))
			}
			continue
		}
		g := p.last(t)
		if g == nil || g.Uses != i-1 || g.MaxUses != 3 || g.State != "active" || g.ExpiresAt != "" || !strings.HasPrefix(g.ID, "gr_") {
			t.Fatalf("get %d: grant in the PDP's input %+v, want %d uses of 3, active", i, g, i-1)
		}
		id = g.ID
	}
	_, err := getAs(f, "agent:a", "arca://app/db")
	if CodeOf(err) != manifest.Denied || err.Error() != "denied: grant exhausted" || CauseOf(err) != "grant_exhausted" {
		t.Fatalf("4th get: %v (cause %q), want denied grant_exhausted", err, CauseOf(err))
	}
	if len(p.asked) != 4 {
		t.Errorf("the PDP was asked %d times, want 4", len(p.asked))
	}
	if g := p.last(t); g == nil || g.ID != id || g.Uses != 3 || g.State != "exhausted" {
		t.Errorf("4th request's grant %+v, want %s exhausted at 3 uses", g, id)
	}
	// The closed grant stays: the PDP sees it, and its allow with
	// max_uses opens a new one.
	if _, err := getAs(f, "agent:a", "arca://app/db"); err != nil {
		t.Fatalf("get after the grant closed: %v", err)
	}
	if g := p.last(t); g == nil || g.ID != id || g.State != "exhausted" {
		t.Errorf("5th request's grant %+v, want the closed %s", g, id)
	}
	if _, err := getAs(f, "agent:a", "arca://app/db"); err != nil {
		t.Fatal(err)
	}
	if g := p.last(t); g == nil || g.ID == id || g.Uses != 1 || g.State != "active" {
		t.Errorf("6th request's grant %+v, want a new one at 1 use", g)
	}
	events := f.events.String()
	for _, want := range []string{`"event":"grant.open","op":"get","outcome":"ok","actor":"agent:a","env":"default","ref":"app/db","grant":"` + id + `"`,
		`"event":"grant.close","op":"get","outcome":"ok","actor":"agent:a","env":"default","ref":"app/db","message":"exhausted","grant":"` + id + `"`,
		`"message":"denied: grant exhausted","policy":{"allow":false,"obligations":["arca:max_uses=3"]},"grant":"` + id + `"`,
		`"policy":{"allow":true,"obligations":["arca:max_uses=3"]},"grant":"` + id + `"`} {
		if !strings.Contains(events, want) {
			t.Errorf("events lack %s:\n%s", want, events)
		}
	}
	if n := strings.Count(events, `"event":"grant.open"`); n != 2 {
		t.Errorf("%d grant.open events, want 2", n)
	}
}

// TestGrantTTL: ttl=60 puts expires_at on a get; once the clock reaches
// it the next request is denied grant_expired, and the next allow opens a
// grant with a new id.
func TestGrantTTL(t *testing.T) {
	f, p, now := grantFixture(t, "arca:ttl=60")
	r, err := getAs(f, "", "arca://app/db")
	if err != nil {
		t.Fatal(err)
	}
	want := now.Add(60 * time.Second)
	if !r.ExpiresAt.Equal(want) {
		t.Fatalf("expires_at %v, want %v", r.ExpiresAt, want)
	}
	var res map[string]any
	if err := json.Unmarshal(r.AppendJSON(nil), &res); err != nil || res["expires_at"] != "2026-01-02T03:05:05.000000000Z" {
		t.Errorf("get result %v (%v), want expires_at 2026-01-02T03:05:05.000000000Z", res, err)
	}
	*now = now.Add(59 * time.Second)
	if _, err := getAs(f, "", "arca://app/db"); err != nil {
		t.Fatalf("get before expiry: %v", err)
	}
	g := p.last(t)
	if g == nil || g.Uses != 1 || g.MaxUses != 0 || g.ExpiresAt != "2026-01-02T03:05:05.000000000Z" || g.State != "active" {
		t.Fatalf("grant in the PDP's input %+v", g)
	}
	*now = now.Add(time.Second)
	_, err = getAs(f, "", "arca://app/db")
	if CodeOf(err) != manifest.Denied || err.Error() != "denied: grant expired" || CauseOf(err) != "grant_expired" {
		t.Fatalf("get at expiry: %v (cause %q), want denied grant_expired", err, CauseOf(err))
	}
	if g := p.last(t); g.State != "expired" || g.Uses != 2 {
		t.Errorf("grant at expiry %+v, want expired after 2 uses", g)
	}
	r, err = getAs(f, "", "arca://app/db")
	if err != nil || !r.ExpiresAt.Equal(now.Add(60*time.Second)) {
		t.Fatalf("get after expiry: %v, expires_at %v, want a new grant", err, r.ExpiresAt)
	}
	if g2 := p.last(t); g2.ID != g.ID || g2.State != "expired" {
		t.Errorf("the request opening the new grant saw %+v, want the expired %s", g2, g.ID)
	}
	if !strings.Contains(f.events.String(), `"event":"grant.close","op":"get","outcome":"ok","env":"default","ref":"app/db","message":"expired"`) {
		t.Errorf("no grant.close expired event:\n%s", f.events.String())
	}
}

// TestGrantNotWidened: while a grant is active, an allow carrying other
// bounds neither widens it nor opens another.
func TestGrantNotWidened(t *testing.T) {
	f, p, _ := grantFixture(t, "arca:max_uses=2")
	for i := 0; i < 2; i++ {
		if _, err := getAs(f, "", "arca://app/db"); err != nil {
			t.Fatal(err)
		}
		p.set("arca:max_uses=100", "arca:ttl=600")
	}
	if _, err := getAs(f, "", "arca://app/db"); CauseOf(err) != "grant_exhausted" {
		t.Fatalf("3rd get: %v, want grant_exhausted", err)
	}
	if g := p.last(t); g.MaxUses != 2 || g.ExpiresAt != "" {
		t.Errorf("grant %+v was widened", g)
	}
}

// TestGrantKeys: a grant is one actor's, on one ref: another actor's or
// another ref's requests neither count its uses nor meet it.
func TestGrantKeys(t *testing.T) {
	f, p, _ := grantFixture(t, "arca:max_uses=1")
	for _, c := range []struct{ actor, ref string }{{"agent:a", "arca://app/db"}, {"agent:b", "arca://app/db"}, {"agent:a", "arca://app/other"}} {
		r, err := getAs(f, c.actor, c.ref)
		if err != nil || p.last(t) != nil {
			t.Fatalf("%s on %s: %v, grant %+v: want its own first grant", c.actor, c.ref, err, p.last(t))
		}
		_ = r
	}
	_, err := getAs(f, "agent:a", "arca://app/db")
	if CauseOf(err) != "grant_exhausted" {
		t.Errorf("agent:a's 2nd get on app/db: %v, want grant_exhausted", err)
	}
}

// TestGrantMalformed: an arca:ttl or arca:max_uses out of range or
// malformed denies, and opens no grant.
func TestGrantMalformed(t *testing.T) {
	for _, ob := range []string{"arca:ttl=0", "arca:ttl=86401", "arca:max_uses=x", "arca:max_uses=0", "arca:max_uses=10001",
		"arca:ttl", "arca:ttl=", "arca:ttl=+5", "arca:ttl=05", "arca:ttl=-1", "arca:ttl=1e3"} {
		f, p, _ := grantFixture(t, ob)
		_, err := getAs(f, "", "arca://app/db")
		if CodeOf(err) != manifest.Denied || !strings.Contains(err.Error(), "cannot fulfil obligation") {
			t.Errorf("%s: %v, want denied", ob, err)
		}
		p.set()
		if _, err := getAs(f, "", "arca://app/db"); err != nil || p.last(t) != nil {
			t.Errorf("%s: next get %v, grant %+v: want none opened", ob, err, p.last(t))
		}
	}
	f, _, _ := grantFixture(t, "arca:ttl=5", "arca:ttl=6")
	if _, err := getAs(f, "", "arca://app/db"); CodeOf(err) != manifest.Denied {
		t.Errorf("ttl given twice: %v, want denied", err)
	}
	f, _, _ = grantFixture(t, "arca:ttl=86400", "arca:max_uses=10000")
	if r, err := getAs(f, "", "arca://app/db"); err != nil || r.ExpiresAt.IsZero() {
		t.Errorf("the upper bounds: %v, %v", err, r.ExpiresAt)
	}
}

// TestGrantDeniedUncounted: a request the PDP denies under an active
// grant counts no use; the request that finds the grant used up is denied
// grant_exhausted even when the PDP denies it too.
func TestGrantDeniedUncounted(t *testing.T) {
	f, p, _ := grantFixture(t, "arca:max_uses=2")
	if _, err := getAs(f, "", "arca://app/db"); err != nil {
		t.Fatal(err)
	}
	p.denying(true)
	if _, err := getAs(f, "", "arca://app/db"); CodeOf(err) != manifest.Denied || CauseOf(err) != "" {
		t.Fatalf("a get the PDP denies: %v (cause %q), want denied by policy", err, CauseOf(err))
	}
	p.denying(false)
	if _, err := getAs(f, "", "arca://app/db"); err != nil {
		t.Fatalf("the second use: %v", err)
	}
	if g := p.last(t); g.Uses != 1 || g.State != "active" {
		t.Errorf("grant before the second use %+v, want 1 use: the denied request counted none", g)
	}
	p.denying(true)
	if _, err := getAs(f, "", "arca://app/db"); CauseOf(err) != "grant_exhausted" {
		t.Errorf("a denied get finding the grant used up: %v (cause %q), want grant_exhausted", err, CauseOf(err))
	}
}

// TestGrantConcurrent: settlements at once under one key are counted one
// by one: with every allow asking for max_uses=5, each sixth finds its
// grant used up and closes it, and the next opens another.
func TestGrantConcurrent(t *testing.T) {
	var gs grants
	key := grantKey{actor: "agent:a", env: "default", ref: "app/db", use: "get"}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	out := make(chan settled, 20)
	for range 20 {
		go func() { out <- gs.settle(key, now, true, grantBounds{maxUses: 5}, openByPDP, "") }()
	}
	closed, opened := 0, 0
	for range 20 {
		st := <-out
		if st.closed == grantExhausted {
			closed++
		}
		if st.opened != nil {
			opened++
		}
	}
	if closed != 3 || opened != 4 {
		t.Errorf("%d closed, %d opened of 20 at once, want 3 and 4", closed, opened)
	}
}
