package ops

import (
	"context"
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
