package ops

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/internal/scrub"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops/ref"
	"github.com/arca-secrets/arca/vault"
)

// useToken is the credential of the tests below.
const useToken = "use-token-8e2f-CANARY"

// TestUseDoScrubsWithoutASession: an http op run by Do with no session's
// values (Request.Scrub nil) still has its credential scrubbed from the
// answer, headers and body, and its event counts the redactions.
func TestUseDoScrubsWithoutASession(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Echo", r.Header.Get("Authorization"))
		fmt.Fprint(w, r.Header.Get("Authorization"))
	}))
	t.Cleanup(srv.Close)
	f := newFixture(t, fmt.Sprintf("[services.api]\nbase_url = %q\ncredential = \"arca://svc/token\"\nauth = \"bearer\"\npaths = [\"/*\"]\nallow_private = true\n", srv.URL))
	ctx := context.Background()
	if _, err := f.svc.Put(ctx, Request{Ref: "arca://svc/token", Value: vault.NewSecret([]byte(useToken))}); err != nil {
		t.Fatal(err)
	}
	f.events.Reset()
	op, _ := manifest.Op("http")
	res, err := f.svc.Do(ctx, op, Request{ID: []byte(`1`), Service: "api", Method: "GET", Path: "/x"})
	if err != nil {
		t.Fatalf("http: %v", err)
	}
	r := res.(*HTTPResult)
	if string(r.Body) != "Bearer <redacted:svc/token>" || r.Header.Get("X-Echo") != "Bearer <redacted:svc/token>" {
		t.Errorf("body %q, X-Echo %q: want the credential redacted", r.Body, r.Header.Get("X-Echo"))
	}
	b := string(r.AppendJSON(nil)) + f.events.String()
	if strings.Contains(b, "CANARY") {
		t.Errorf("the answer or the event holds the credential")
	}
	if ev := f.lines(t); len(ev) != 1 || ev[0].Use == nil || ev[0].Use.Redactions != 2 || ev[0].Use.Status != 200 {
		t.Errorf("events %+v: want one, of status 200 and 2 redactions", ev)
	}
}

// TestScrubUseWhenTheSetIsFull: a credential a full set cannot take is
// scrubbed by a set of its own, applied first; a set that takes it is
// used alone.
func TestScrubUseWhenTheSetIsFull(t *testing.T) {
	r, err := ref.Parse("arca://svc/token")
	if err != nil {
		t.Fatal(err)
	}
	creds := []used{{useCred: useCred{slot: "secret", ref: r}, value: vault.NewSecret([]byte(useToken))}}
	roomy := scrub.NewSet()
	if sets := scrubSets(roomy, creds); len(sets) != 1 || sets[0] != roomy {
		t.Errorf("a set with room: %d sets, want it alone", len(sets))
	}
	full := scrub.NewSet()
	for i := 0; ; i++ {
		if full.Add(fmt.Sprintf("app/v%d", i), []byte(strings.Repeat(fmt.Sprintf("%08d", i), 8<<10))) != nil {
			break
		}
	}
	for i := 0; ; i++ { // fill what is left with short values
		if full.Add(fmt.Sprintf("app/w%d", i), []byte(fmt.Sprintf("w%07d", i))) != nil {
			break
		}
	}
	sets := scrubSets(full, creds)
	if len(sets) != 2 || sets[1] != full {
		t.Fatalf("a full set: %d sets, want the credentials' own and then it", len(sets))
	}
	var rs redactions
	out := scrubText(sets, []byte("a "+useToken+" w0000001 b"), false, &rs)
	if string(out) != "a <redacted:svc/token> <redacted:app/w1> b" || rs.total() != 2 {
		t.Errorf("scrubbed %q with %d redactions", out, rs.total())
	}
}
