package ui

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/ops/access"
)

// writeTrail writes a trail of gets of refs, one at each of at, as the
// CLI writes them, and returns its path.
func writeTrail(t *testing.T, dir, name string, refs []string, at []time.Time) string {
	t.Helper()
	var buf strings.Builder
	i := 0
	w := audit.NewWriter(&buf, audit.SourceCLI, func() time.Time { i++; return at[i-1] })
	for _, ref := range refs {
		if err := w.Write(audit.Event{Event: "get", Op: "get", Outcome: audit.OK, Env: "default", Ref: ref}); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(buf.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Several trails are one view: their events merged by time, newest first,
// each with its file; one chart over the span of them all; each trail's
// chain apart. A record's detail reads its events from every trail.
func TestSeveralTrails(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	at := func(s ...int) []time.Time {
		var ts []time.Time
		for _, n := range s {
			ts = append(ts, t0.Add(time.Duration(n)*time.Minute))
		}
		return ts
	}
	a := writeTrail(t, dir, "a.log", []string{"app/db", "app/db"}, at(1, 3))
	b := writeTrail(t, dir, "b.log", []string{"app/db", "app/other"}, at(2, 40))
	s, err := New(Options{Token: testToken, Vaults: access.Service{Service: f.svc}, Envs: []string{"default"}, AuditFiles: []string{a, b}})
	if err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, s)
	var v trailView
	getFrom(t, srv, "/api/audit?env=default", &v)
	var got []string
	for _, e := range v.Events {
		got = append(got, filepath.Base(e.File)+":"+e.TS[11:16])
	}
	if strings.Join(got, " ") != "b.log:00:40 a.log:00:03 b.log:00:02 a.log:00:01" {
		t.Fatalf("events: %v", got)
	}
	total := 0
	for _, c := range v.Chart {
		total += c.OK
	}
	if v.Matched != 4 || total != 4 || len(v.Chart) != Buckets || v.From != audit.FormatTime(t0.Add(time.Minute)) || v.To != audit.FormatTime(t0.Add(40*time.Minute)) ||
		v.Chart[0].OK != 1 || v.Chart[Buckets-1].OK != 1 {
		t.Fatalf("the chart: matched %d, %d in bars, %s to %s, first bar %d, last %d", v.Matched, total, v.From, v.To, v.Chart[0].OK, v.Chart[Buckets-1].OK)
	}
	if len(v.Chains) != 2 || !v.Chains[0].OK || v.Chains[1].File != b || v.Chains[1].Events != 2 {
		t.Fatalf("the chains: %+v", v.Chains)
	}
	// since and until pick a range, across the trails.
	getFrom(t, srv, "/api/audit?env=default&since=2026-12-01T00:02:00Z&until=2026-12-01T00:10:00Z", &v)
	if v.Matched != 2 || len(v.Events) != 2 || v.Events[0].Ref != "app/db" {
		t.Fatalf("a range: %d matched: %+v", v.Matched, v.Events)
	}
	// The detail of app/db: its events in both trails (the page's own
	// history read goes to the fixture's audit file, not given here).
	var d struct {
		Events  []event `json:"events"`
		Matched int     `json:"matched"`
	}
	getFrom(t, srv, "/api/record?env=default&ref=arca://app/db", &d)
	if d.Matched != 3 || len(d.Events) != 3 || filepath.Base(d.Events[0].File) != "a.log" {
		t.Fatalf("the detail's events: %d: %+v", d.Matched, d.Events)
	}
	if _, err := New(Options{Token: testToken, Vaults: access.Service{Service: f.svc}, AuditFiles: make([]string, MaxTrails+1)}); err == nil {
		t.Fatalf("%d trails: no error", MaxTrails+1)
	}
}

// getFrom reads path of the server at base with the token, into v.
func getFrom(t *testing.T, base, path string, v any) {
	t.Helper()
	req, _ := http.NewRequest("GET", base+path, nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %d", path, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// An env's view holds the events that name no env too: a serve session's
// start (who served, where) and stop, beside its requests in that env;
// another env's requests are not in it.
func TestEnvViewHoldsASessionsStartAndStop(t *testing.T) {
	f := newFixture(t)
	var buf strings.Builder
	w := audit.NewWriter(&buf, audit.SourceServe, nil)
	for _, e := range []audit.Event{
		{Event: "start", Message: "arca serving", User: "ana", Host: "laptop"},
		{Event: "get", Op: "get", Outcome: audit.OK, Env: "default", Ref: "app/db"},
		{Event: "get", Op: "get", Outcome: audit.OK, Env: "prod", Ref: "app/db"},
		{Event: "stop", Message: "end of input"},
	} {
		if err := w.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	wire := filepath.Join(t.TempDir(), "wire.log")
	if err := os.WriteFile(wire, []byte(buf.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Token: testToken, Vaults: access.Service{Service: f.svc}, Envs: []string{"default"}, AuditFiles: []string{wire}})
	if err != nil {
		t.Fatal(err)
	}
	var v trailView
	getFrom(t, startServer(t, s), "/api/audit?env=default", &v)
	var got []string
	for _, e := range v.Events {
		got = append(got, e.Event+"/"+e.Env+"/"+e.User)
	}
	if strings.Join(got, " ") != "stop// get/default/ start//ana" {
		t.Fatalf("the default env's view of a serve wire: %q", got)
	}
}
