package ops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/vault"
)

const twoVaults = "[envs.default]\nvault = \"a\"\n[envs.other]\nvault = \"b\"\n[vaults.a]\nkind = \"file\"\n[vaults.b]\nkind = \"file\"\n"

func putOp() manifest.OpSpec {
	op, _ := manifest.Op("put")
	return op
}

func getOp() manifest.OpSpec {
	op, _ := manifest.Op("get")
	return op
}

func putReq(ref, value, env string) Request {
	return Request{Ref: ref, Value: vault.NewSecret([]byte(value)), Env: env}
}

// A run of writes holds its results until Commit; a write to another
// vault commits what the run held first, so a group is one vault's.
func TestWritesCommitPerVault(t *testing.T) {
	f := newFixture(t, twoVaults)
	ctx := context.Background()
	ws := f.svc.Writes()
	a1 := ws.Add(ctx, putOp(), putReq("arca://app/one", "1", ""))
	a2 := ws.Add(ctx, putOp(), putReq("arca://app/two", "2", ""))
	if a1.Final() || a2.Final() {
		t.Fatal("a write is final before its group committed")
	}
	if _, err := a1.Result(); CodeOf(err) != manifest.OpError {
		t.Errorf("the result of an uncommitted write: %v, want op_error", err)
	}
	b1 := ws.Add(ctx, putOp(), putReq("arca://app/three", "3", "other"))
	if !a1.Final() || !a2.Final() || b1.Final() {
		t.Errorf("after a write to another vault: final %t %t %t, want the first vault's writes committed", a1.Final(), a2.Final(), b1.Final())
	}
	ws.Commit(ctx)
	for i, w := range []*Written{a1, a2, b1} {
		res, err := w.Result()
		if err != nil {
			t.Fatalf("write %d: %v", i+1, err)
		}
		if p, ok := res.(PutResult); !ok || p.Version != 1 || !p.Created {
			t.Errorf("write %d: %+v, want a created put", i+1, res)
		}
	}
	for _, c := range []struct{ ref, env string }{{"arca://app/one", ""}, {"arca://app/two", ""}, {"arca://app/three", "other"}} {
		if _, err := f.svc.Get(ctx, Request{Ref: c.ref, Env: c.env}); err != nil {
			t.Errorf("get %s in %q: %v", c.ref, c.env, err)
		}
	}
	if _, err := f.svc.Get(ctx, Request{Ref: "arca://app/three"}); CodeOf(err) != manifest.NotFound {
		t.Errorf("a write to env other reached env default: %v", err)
	}
}

// Abort fails every write the run held with its second event, and
// nothing of them lands.
func TestWritesAbort(t *testing.T) {
	f := newFixture(t, "")
	ctx := context.Background()
	ws := f.svc.Writes()
	w := ws.Add(ctx, putOp(), putReq("arca://app/one", "1", ""))
	ws.Abort("internal error while handling the request")
	if _, err := w.Result(); CodeOf(err) != manifest.OpError || !strings.Contains(err.Error(), "audited but not committed") {
		t.Errorf("an aborted write: %v", err)
	}
	evs := f.lines(t)
	if n := len(evs); n < 2 || evs[n-2].Event != "put" || evs[n-1].Event != "error" || evs[n-1].Outcome != "error" {
		t.Errorf("events of an aborted write: %+v", evs)
	}
	if _, err := f.svc.Get(ctx, Request{Ref: "arca://app/one"}); CodeOf(err) != manifest.NotFound {
		t.Errorf("an aborted write landed: %v", err)
	}
}

// A write op Writes does not know is refused, not run.
func TestWritesRefusesOtherOps(t *testing.T) {
	f := newFixture(t, "")
	for _, op := range []manifest.OpSpec{getOp(), {Name: "nope", Writes: true}} {
		w := f.svc.Writes().Add(context.Background(), op, Request{Ref: "arca://app/one"})
		if _, err := w.Result(); CodeOf(err) != manifest.UnknownOp {
			t.Errorf("%s through Writes: %v, want unknown_op", op.Name, err)
		}
	}
}

// upcoming is an Upcoming of op-and-request pairs.
type upcoming []struct {
	op  manifest.OpSpec
	req Request
}

func (u upcoming) Len() int                             { return len(u) }
func (u upcoming) At(i int) (manifest.OpSpec, *Request) { return u[i].op, &u[i].req }

func rmOp() manifest.OpSpec {
	op, _ := manifest.Op("rm")
	return op
}

// withID is req with the id n.
func withID(req Request, n int) Request {
	req.ID = json.RawMessage(strconv.Itoa(n))
	return req
}

// addAll adds every write of up to ws in order, commits, and returns
// each write's outcome: its result's type, or its error's code.
func addAll(ctx context.Context, ws *Writes, up upcoming) []string {
	var wr []*Written
	for i := range up {
		wr = append(wr, ws.Add(ctx, up[i].op, up[i].req))
	}
	ws.Commit(ctx)
	var out []string
	for _, w := range wr {
		res, err := w.Result()
		if err != nil {
			out = append(out, string(CodeOf(err)))
			continue
		}
		out = append(out, fmt.Sprintf("%T", res))
	}
	return out
}

// wantTrail checks what reached the groups (fixture.trail).
func wantTrail(t *testing.T, f *fixture, want ...string) {
	t.Helper()
	if strings.Join(f.trail, "|") != strings.Join(want, "|") {
		t.Errorf("what reached the groups:\n got %q\nwant %q", f.trail, want)
	}
}

// wantOnceEach checks that the request events are one per id, 1 to n in
// order, as "event:id".
func wantOnceEach(t *testing.T, f *fixture, want ...string) {
	t.Helper()
	var got []string
	for _, e := range f.lines(t) {
		if e.ID != nil {
			got = append(got, e.Event+":"+string(e.ID))
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("events:\n got %v\nwant %v", got, want)
	}
}

// Each group opened after Reserve is given, before its first Add, the
// names of the writes still to come to its vault, in order; a write that
// does not resolve (its ref, its env) is left out and still audited once,
// by Add.
func TestWritesReserveNamesOfItsVault(t *testing.T) {
	f := newFixture(t, twoVaults)
	f.reserve = func([]string) error { return nil }
	ctx := context.Background()
	up := upcoming{
		{putOp(), withID(putReq("arca://app/../x", "1", ""), 1)},
		{putOp(), withID(putReq("arca://app/two", "2", "other"), 2)},
		{putOp(), withID(putReq("arca://app/one", "3", ""), 3)},
		{rmOp(), withID(Request{Ref: "arca://app/three"}, 4)},
		{putOp(), withID(putReq("arca://app/five", "5", "other"), 5)},
		{putOp(), withID(putReq("arca://app/six", "6", "nope"), 6)},
		{putOp(), withID(putReq("arca://other/app/seven", "7", ""), 7)},
	}
	ws := f.svc.Writes()
	ws.Reserve(up)
	got := addAll(ctx, ws, up)
	want := []string{"bad_request", "ops.PutResult", "ops.PutResult", "not_found", "ops.PutResult", "bad_request", "ops.PutResult"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("outcomes %v, want %v", got, want)
	}
	wantTrail(t, f, "reserve b: app/two app/five app/seven", "add b: app/two", "commit b",
		"reserve a: app/one app/three", "add a: app/one", "add a: app/three", "commit a",
		"reserve b: app/five app/seven", "add b: app/five", "add b: app/seven", "commit b")
	wantOnceEach(t, f, "error:1", "put:2", "put:3", "error:4", "put:5", "error:6", "put:7")
}

// A Reserve that fails audits nothing; its group is let go, and the
// writes go through Add as ever, each answered and audited once.
func TestWritesReserveFails(t *testing.T) {
	f := newFixture(t, "")
	f.reserve = func([]string) error { return errors.New("lock wait ended") }
	ctx := context.Background()
	up := upcoming{
		{putOp(), withID(putReq("arca://app/one", "1", ""), 1)},
		{putOp(), withID(putReq("arca://app/two", "2", ""), 2)},
	}
	ws := f.svc.Writes()
	ws.Reserve(up)
	if got := addAll(ctx, ws, up); strings.Join(got, " ") != "ops.PutResult ops.PutResult" {
		t.Errorf("outcomes %v, want two puts", got)
	}
	wantTrail(t, f, "reserve default: app/one app/two", "abort default", "add default: app/one", "add default: app/two", "commit default")
	wantOnceEach(t, f, "put:1", "put:2")
}

// Nothing to reserve: no write resolves, so no group is opened, and Add
// audits each failure once; a vault whose groups are no Reserver is
// given the writes by Add alone.
func TestWritesReserveNothing(t *testing.T) {
	f := newFixture(t, "")
	f.reserve = func([]string) error { return nil }
	ctx := context.Background()
	up := upcoming{
		{putOp(), withID(putReq("not a ref", "1", ""), 1)},
		{getOp(), withID(Request{Ref: "arca://app/one"}, 2)},
	}
	ws := f.svc.Writes()
	ws.Reserve(up)
	if got := addAll(ctx, ws, up); strings.Join(got, " ") != "bad_request unknown_op" {
		t.Errorf("outcomes %v", got)
	}
	if len(f.trail) != 0 {
		t.Errorf("a group was opened for writes that do not resolve: %q", f.trail)
	}
	wantOnceEach(t, f, "error:1", "error:2")

	f.reserve, f.trail = nil, nil
	ws = f.svc.Writes()
	plain := upcoming{{putOp(), putReq("arca://app/one", "1", "")}, {putOp(), putReq("arca://app/two", "2", "")}}
	ws.Reserve(plain)
	if got := addAll(ctx, ws, plain); strings.Join(got, " ") != "ops.PutResult ops.PutResult" {
		t.Errorf("outcomes %v, want two puts", got)
	}
}

// A write refused before it reaches the vault (here by a guardrail) opens
// no group: the vault is given nothing until a write is let through, and
// then the names of that write and of those behind it.
func TestWritesReserveWaitsForAWriteLetThrough(t *testing.T) {
	f := newFixture(t, "[[guardrails.rule]]\nref = \"billing/*\"\nops = [\"put\"]\nreason = \"billing is read-only\"\n")
	f.reserve = func([]string) error { return nil }
	ctx := context.Background()
	up := upcoming{
		{putOp(), withID(putReq("arca://billing/one", "1", ""), 1)},
		{putOp(), withID(putReq("arca://app/two", "2", ""), 2)},
	}
	ws := f.svc.Writes()
	ws.Reserve(up)
	if w := ws.Add(ctx, up[0].op, up[0].req); !w.Final() || ws.Holding() || len(f.trail) != 0 {
		t.Fatalf("a refused write: final %t, holding %t, the vault given %q; want it final and nothing given", w.Final(), ws.Holding(), f.trail)
	}
	ws.Add(ctx, up[1].op, up[1].req)
	if !ws.Holding() {
		t.Error("a write let through holds no group")
	}
	ws.Commit(ctx)
	wantTrail(t, f, "reserve default: app/two", "add default: app/two", "commit default")
	wantOnceEach(t, f, "denied:1", "put:2")
}

// A group the vault says is full (vault.ErrCommitFirst) is committed and
// followed by one given the names of the writes left.
func TestWritesReserveAfterAFullGroup(t *testing.T) {
	f := newFixture(t, "")
	f.reserve = func([]string) error { return nil }
	f.groupCap = 2
	ctx := context.Background()
	var up upcoming
	for i := 1; i <= 5; i++ {
		up = append(up, struct {
			op  manifest.OpSpec
			req Request
		}{putOp(), withID(putReq(fmt.Sprintf("arca://app/k%d", i), "v", ""), i)})
	}
	ws := f.svc.Writes()
	ws.Reserve(up)
	if got := addAll(ctx, ws, up); strings.Count(strings.Join(got, " "), "ops.PutResult") != 5 {
		t.Errorf("outcomes %v, want five puts", got)
	}
	wantTrail(t, f, "reserve default: app/k1 app/k2 app/k3 app/k4 app/k5", "add default: app/k1", "add default: app/k2", "full default", "commit default",
		"reserve default: app/k3 app/k4 app/k5", "add default: app/k3", "add default: app/k4", "full default", "commit default",
		"reserve default: app/k5", "add default: app/k5", "commit default")
	wantOnceEach(t, f, "put:1", "put:2", "put:3", "put:4", "put:5")
}
