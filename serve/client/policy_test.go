package client

import (
	"bytes"
	"context"
	"reflect"
	"slices"
	"testing"
)

// policyLines are successes of every shape carrying a verdict: both paths
// must agree on them (differAll), and put the verdict on the result.
var policyLines = []string{
	`{"id":7,"ok":true,"result":{"ref":"arca://app/db","env":"default","value":"v","version":3,"created_at":"2026-11-30T08:14:14.381353202Z","updated_at":"2026-11-30T08:16:08.506410195Z"},"policy":{"allow":true,"reason":"r","obligations":["log-access","notify:oncall"]}}`,
	`{"id":7,"ok":true,"result":{"ref":"arca://app/db","env":"default","version":1,"created":true,"created_at":"2026-11-30T08:14:14.381353202Z","updated_at":"2026-11-30T08:14:14.381353202Z"},"policy":{"allow":true,"reason":"r","obligations":["log-access","notify:oncall"]}}`,
	`{"id":7,"ok":true,"result":{"ref":"arca://app/db","env":"default","version":2,"created_at":"2026-11-30T08:14:14.381353202Z","updated_at":"2026-11-30T08:16:08.506410195Z","rotated_at":"2026-11-30T08:16:08.506410195Z"},"policy":{"allow":true,"reason":"r","obligations":["log-access","notify:oncall"]}}`,
	`{"id":7,"ok":true,"result":{"ref":"arca://app/db","env":"default","removed":true,"version":2},"policy":{"allow":true,"reason":"r","obligations":["log-access","notify:oncall"]}}`,
	`{"id":7,"ok":true,"result":{"env":"default","records":[],"truncated":false,"omitted":0},"policy":{"allow":true,"reason":"r","obligations":["log-access","notify:oncall"]}}`,
	`{"id":7,"policy":{"obligations":["log-access","notify:oncall"],"reason":"r","allow":true},"ok":true,"result":{"ref":"arca://app/db","value":"v"}}`,
	`{"id":7,"ok":true,"result":{"env":"default","vault":"default","kind":"file","healthy":true,"records":1,"problems":[]},"policy":{"allow":true,"reason":"r","obligations":["log-access","notify:oncall"]}}`,
}

// policyOf decodes a line as each result type, returning its policy and
// whether the fast path took the line.
var policyOf = map[string]func(line []byte) (*Policy, bool){
	"Got":     func(l []byte) (*Policy, bool) { return policyBy(l, func(r *Got) *Policy { return r.Policy }) },
	"Put":     func(l []byte) (*Policy, bool) { return policyBy(l, func(r *Put) *Policy { return r.Policy }) },
	"Rotated": func(l []byte) (*Policy, bool) { return policyBy(l, func(r *Rotated) *Policy { return r.Policy }) },
	"Removed": func(l []byte) (*Policy, bool) { return policyBy(l, func(r *Removed) *Policy { return r.Policy }) },
	"Listed":  func(l []byte) (*Policy, bool) { return policyBy(l, func(r *Listed) *Policy { return r.Policy }) },
	"Checked": func(l []byte) (*Policy, bool) { return policyBy(l, func(r *Checked) *Policy { return r.Policy }) },
}

// policyBy decodes line as a response to request 7 into a T, by the fast
// path when it takes it, and returns the result's policy.
func policyBy[T any](line []byte, of func(*T) *Policy) (p *Policy, handled bool) {
	var r T
	if handled, _ = fast(line, sent{id: []byte("7")}, &r); !handled {
		_ = slow(line, []byte("7"), &r)
	}
	return of(&r), handled
}

// Every typed result carries the verdict of a success, by both paths, and
// the fast path takes the shapes it exists for with a verdict too.
func TestSuccessCarriesPolicy(t *testing.T) {
	want := &Policy{Allow: true, Reason: "r", Obligations: []string{"log-access", "notify:oncall"}}
	for _, line := range policyLines {
		if diff, _ := differAll([]byte(line), []byte("7")); diff != "" {
			t.Errorf("%s: %s", line, diff)
		}
	}
	for name, lines := range map[string][]int{"Got": {0, 5}, "Put": {1}, "Rotated": {2}, "Removed": {3}, "Listed": {4}, "Checked": {6}} {
		for _, i := range lines {
			p, handled := policyOf[name]([]byte(policyLines[i]))
			if !handled && name != "Listed" && name != "Checked" { // these two have no fast path
				t.Errorf("%s: the fast path did not take %s", name, policyLines[i])
			}
			if !reflect.DeepEqual(p, want) {
				t.Errorf("%s of %s: policy %+v", name, policyLines[i], p)
			}
		}
	}
}

// The successes of real sessions whose PDP allows carry its verdict, by
// both paths alike (TestDecodeRealLines holds them to the same).
func TestRealSuccessesCarryPolicy(t *testing.T) {
	n := 0
	for _, line := range realLines(t) {
		typ := fastType(line)
		if !bytes.Contains(line, []byte(`"ok":true`)) || !bytes.Contains(line, []byte(`"policy":`)) || policyOf[typ] == nil {
			continue
		}
		line = bytes.Replace(line, idOf(line), []byte("7"), 1)
		if p, handled := policyOf[typ](line); !handled || p == nil || !p.Allow {
			t.Errorf("%s as %s: policy %+v (fast path: %v)", line, typ, p, handled)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no real success carried a policy: the test proves nothing")
	}
}

// Through serve, with a PDP that allows with obligations: every op's result
// carries its verdict; the manifest, which no PDP decides, none.
func TestResultsCarryThePolicy(t *testing.T) {
	c := start(t, home(t, pdp(`{"allow": true, "reason": "ok", "obligations": ["log-access"]}`, 0, false)))
	ctx := context.Background()
	check := func(op string, p *Policy, err error) {
		t.Helper()
		if err != nil || p == nil || !p.Allow || p.Reason != "ok" || !slices.Equal(p.Obligations, []string{"log-access"}) {
			t.Fatalf("%s: policy %+v, %v", op, p, err)
		}
	}
	put, err := c.Put(ctx, Request{Ref: "arca://app/db", Value: []byte("v")})
	check("put", put.Policy, err)
	got, err := c.Get(ctx, Request{Ref: "arca://app/db"})
	check("get", got.Policy, err)
	rot, err := c.Rotate(ctx, Request{Ref: "arca://app/db", Value: []byte("w")})
	check("rotate", rot.Policy, err)
	list, err := c.List(ctx, Request{})
	check("list", list.Policy, err)
	chk, err := c.Check(ctx, Request{})
	check("check", chk.Policy, err)
	rm, err := c.Rm(ctx, Request{Ref: "arca://app/db"})
	check("rm", rm.Policy, err)
}
