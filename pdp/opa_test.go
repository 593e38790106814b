package pdp

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/arca-secrets/arca/pdp/pdptest"
)

// startOPA runs `opa run --server` on addr (host:port, or unix://path)
// with testdata/opa/policy.rego until the test ends.
func startOPA(tb testing.TB, addr string) {
	tb.Helper()
	policy, err := filepath.Abs("testdata/opa/policy.rego")
	if err != nil {
		tb.Fatal(err)
	}
	pdptest.StartOPAServer(tb, addr, policy)
}

var (
	ciGet   = Request{Actor: "agent:ci", Attestation: "job-7781", Op: "get", Env: "dev", Ref: "app/db"}
	prodGet = Request{Actor: "agent:ci", Op: "get", Env: "prod", Ref: "app/db"}
)

// TestOPAServer drives a real `opa run --server` through its REST data
// API: the policy's verdict object, its bare boolean, and an undefined
// path, over TCP and over a unix socket.
func TestOPAServer(t *testing.T) {
	addr := pdptest.FreeAddr(t)
	startOPA(t, addr)
	sock := filepath.Join(t.TempDir(), "opa.sock")
	startOPA(t, "unix://"+sock)
	type want struct {
		req Request
		v   *Verdict
		why string
	}
	for _, c := range []struct {
		url, path string
		wants     []want
	}{
		{url: "http://" + addr + "/v1/data/arca/decision", wants: []want{
			{req: ciGet, v: allow("agent:ci may read dev")},
			{req: prodGet, v: deny("no rule allows this")},
			{req: Request{Op: "list", Env: "dev"}, v: deny("no rule allows this")},
		}},
		{url: "http://" + addr + "/v1/data/arca/allow", wants: []want{
			{req: ciGet, v: allow("")},
			{req: prodGet, v: deny("")},
		}},
		{url: "http://" + addr + "/v1/data/arca/no_such_rule", wants: []want{
			{req: ciGet, why: "opa result is undefined"},
		}},
		{url: "http://" + addr + "/v1/data/arca/reason", wants: []want{
			{req: ciGet, why: "opa result is neither a verdict object nor a boolean"},
		}},
		{url: "unix:" + sock, path: "/v1/data/arca/decision", wants: []want{
			{req: ciGet, v: allow("agent:ci may read dev")},
			{req: prodGet, v: deny("no rule allows this")},
		}},
	} {
		d := New(Config{URL: c.url, HTTPPath: c.path, API: APIOPA, Timeout: 10 * time.Second})
		for _, w := range c.wants {
			v, err := d.Decide(context.Background(), w.req)
			if w.v == nil {
				wantUnreachable(t, err, w.why)
				continue
			}
			if err != nil || !reflect.DeepEqual(v, *w.v) {
				t.Errorf("%s %+v: verdict %+v, err %v; want %+v", c.url, w.req, v, err, *w.v)
			}
		}
		d.Close()
	}
}
