package ops

import (
	"context"
	"fmt"
	"testing"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/manifest"
)

// TestHandlersMatchTheOpTable: every served op that is not a meta-op has a
// handler of its kind (a read, or a change and its result for an op that
// writes), and every handler has a row: an op added to one and not the
// other fails here, not at a request.
func TestHandlersMatchTheOpTable(t *testing.T) {
	hs := handlers()
	rows := map[string]bool{}
	for _, op := range manifest.Ops() {
		rows[op.Name] = true
		h, ok := hs[op.Name]
		switch {
		case (op.Meta || op.Session) && ok:
			t.Errorf("meta-op or session op %q has an ops handler: serve answers it", op.Name)
		case op.Use && ok:
			t.Errorf("use %q has a handler: a use is run by use.go", op.Name)
		case op.Meta || op.Session || op.Use:
		case !ok:
			t.Errorf("op %q has no handler", op.Name)
		case op.Writes && (h.change == nil || h.result == nil || h.read != nil):
			t.Errorf("op %q writes, but its handler is not a change and a result", op.Name)
		case !op.Writes && (h.read == nil || h.change != nil || h.result != nil):
			t.Errorf("op %q reads, but its handler is not a read", op.Name)
		}
	}
	for name := range hs {
		if !rows[name] {
			t.Errorf("handler %q has no row in the op table", name)
		}
	}
}

// TestDoRefusesWhatItCannotRun: a meta-op or an op with no handler is
// unknown_op, audited, and never reaches a vault.
func TestDoRefusesWhatItCannotRun(t *testing.T) {
	f := newFixture(t, "")
	for _, name := range []string{"manifest", "scrub", "nope"} {
		op, ok := manifest.Op(name)
		if !ok {
			op = manifest.OpSpec{Name: name, ConsultsPDP: true}
		}
		f.events.Reset()
		_, err := f.svc.Do(context.Background(), op, Request{ID: []byte(`3`)})
		if CodeOf(err) != manifest.UnknownOp {
			t.Errorf("Do(%s): %v, want unknown_op", name, err)
		}
		if ev := f.lines(t); len(ev) != 1 || ev[0].Op != name || ev[0].Code != string(manifest.UnknownOp) {
			t.Errorf("Do(%s): events %+v, want one unknown_op event", name, ev)
		}
	}
}

// TestFieldsErrorOneWording: the fields an op needs and refuses are checked
// once, in one wording, whichever door set them: a decoder's Set (sent,
// even empty) or a field set directly (sent when not empty).
func TestFieldsErrorOneWording(t *testing.T) {
	op := func(n string) manifest.OpSpec { o, _ := manifest.Op(n); return o }
	field := func(n string) manifest.Field { f, _ := manifest.RequestField(n); return f }
	set := func(kv ...string) Request {
		var r Request
		for i := 0; i < len(kv); i += 2 {
			r.Set(field(kv[i]), kv[i+1])
		}
		return r
	}
	for _, c := range []struct {
		name string
		op   string
		req  Request
		want string
	}{
		{"missing ref", "get", Request{}, `get needs field "ref"`},
		{"missing value", "put", Request{Ref: "arca://a/b"}, `put needs field "value"`},
		{"missing both: ref first", "rotate", Request{}, `rotate needs field "ref"`},
		{"ref refused", "list", Request{Ref: "arca://a/b"}, `list takes no field "ref"`},
		{"empty ref sent is refused too", "list", set("ref", ""), `list takes no field "ref"`},
		{"value refused", "get", Request{Ref: "arca://a/b", Value: secret("v")}, `get takes no field "value"`},
		{"empty value sent is refused too", "rm", set("ref", "arca://a/b", "value", ""), `rm takes no field "value"`},
		{"empty ref", "get", set("ref", ""), "ref is empty"},
		{"empty value", "put", set("ref", "arca://a/b", "value", ""), "value is empty (a secret needs at least one byte)"},
		{"missing before refused", "get", Request{Value: secret("v")}, `get needs field "ref"`},
		{"ok", "put", Request{Ref: "arca://a/b", Value: secret("v")}, ""},
		{"ok, decoded", "check", set("op", "check", "env", "", "actor", "a", "attestation", ""), ""},
	} {
		err := c.req.FieldsError(op(c.op))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v, want nil", c.name, err)
		case c.want != "" && (err == nil || err.Error() != c.want || CodeOf(err) != manifest.BadRequest):
			t.Errorf("%s: %v, want bad_request %q", c.name, err, c.want)
		}
	}
}

// TestDoTakesOnlyTheTablesRows: a row that is not the op table's own (a
// caller describing put as an op that needs no PDP, or get as a write) is
// refused unknown_op with its one event, and nothing reaches the vault:
// what an op is comes from the table, never from the caller.
func TestDoTakesOnlyTheTablesRows(t *testing.T) {
	f := newFixture(t, "")
	ctx := context.Background()
	if _, err := f.svc.List(ctx, Request{}); err != nil { // opens the store, so calls can be counted
		t.Fatal(err)
	}
	put, get := putOp(), getOp()
	noPDP := put
	noPDP.ConsultsPDP = false
	getAsWrite := get
	getAsWrite.Writes = true
	putAsRead := put
	putAsRead.Writes = false
	manifestRow, _ := manifest.Op("manifest")
	for _, c := range []struct {
		name string
		run  func() error
	}{
		{"put without its PDP", func() error {
			_, err := f.svc.Do(ctx, noPDP, Request{Ref: "arca://app/db", Value: secret("v")})
			return err
		}},
		{"get as a write", func() error { _, err := f.svc.Do(ctx, getAsWrite, Request{Ref: "arca://app/db"}); return err }},
		{"put as a read", func() error {
			_, err := f.svc.Do(ctx, putAsRead, Request{Ref: "arca://app/db", Value: secret("v")})
			return err
		}},
		{"get through Writes", func() error {
			_, err := f.svc.Writes().Add(ctx, get, Request{Ref: "arca://app/db"}).Result()
			return err
		}},
		{"put without its PDP through Writes", func() error {
			_, err := f.svc.Writes().Add(ctx, noPDP, Request{Ref: "arca://app/db", Value: secret("v")}).Result()
			return err
		}},
		{"get as a meta-op", func() error {
			getAsMeta := get
			getAsMeta.Meta = true
			_, err := f.svc.Meta(ctx, getAsMeta, Request{Ref: "arca://app/db"})
			return err
		}},
		{"put through Meta", func() error { _, err := f.svc.Meta(ctx, put, Request{}); return err }},
	} {
		f.events.Reset()
		calls := f.store.calls
		if err := c.run(); CodeOf(err) != manifest.UnknownOp {
			t.Errorf("%s: %v, want unknown_op", c.name, err)
		}
		if ev := f.lines(t); len(ev) != 1 || ev[0].Code != string(manifest.UnknownOp) {
			t.Errorf("%s: events %+v, want one unknown_op event", c.name, ev)
		}
		if f.store.calls != calls {
			t.Errorf("%s reached the vault", c.name)
		}
	}
	// The table's own rows run (the positive control).
	if _, err := f.svc.Do(ctx, put, Request{Ref: "arca://app/db", Value: secret("v")}); err != nil {
		t.Fatalf("the table's put: %v", err)
	}
	if _, err := f.svc.Meta(ctx, manifestRow, Request{}); err != nil {
		t.Fatalf("the table's manifest: %v", err)
	}
}

// TestAttestationSentEmptyIsHashed: an attestation sent, even empty, is
// recorded by its hash on the request's event, whether ops refuses the
// request or runs it (as serve's own refusals record it).
func TestAttestationSentEmptyIsHashed(t *testing.T) {
	f := newFixture(t, "")
	att, _ := manifest.RequestField("attestation")
	for _, c := range []struct {
		name string
		req  Request
	}{
		{"refused for its fields", Request{}},
		{"run", Request{Ref: "arca://app/none"}},
	} {
		f.events.Reset()
		c.req.Set(att, "")
		f.svc.Get(context.Background(), c.req)
		if ev := f.lines(t); len(ev) != 1 || ev[0].AttestationSHA256 != audit.HashAttestation("") {
			t.Errorf("%s: events %+v, want one with the empty attestation's hash", c.name, ev)
		}
	}
	f.events.Reset()
	f.svc.Get(context.Background(), Request{Ref: "arca://app/none"})
	if ev := f.lines(t); len(ev) != 1 || ev[0].AttestationSHA256 != "" {
		t.Errorf("no attestation sent: events %+v, want no hash", ev)
	}
}

// TestReadHoldsItsEventUntilFinish: a read run ahead (Service.Read) writes
// no event, whatever its outcome; Finish writes its one event, so reads run
// in one order are audited in the order they are finished, and a get's
// value comes back only from Finish. A write handed to Read is refused
// unknown_op, its event held as any other, and writes nothing.
func TestReadHoldsItsEventUntilFinish(t *testing.T) {
	f := newFixture(t, "")
	ctx := context.Background()
	if _, err := f.svc.Put(ctx, Request{Ref: "arca://app/db", Value: secret("v1")}); err != nil {
		t.Fatal(err)
	}
	get, _ := manifest.Op("get")
	list, _ := manifest.Op("list")
	put, _ := manifest.Op("put")
	f.events.Reset()
	reads := []*Read{
		f.svc.Read(ctx, get, Request{ID: []byte(`1`), Ref: "arca://app/db"}),
		f.svc.Read(ctx, get, Request{ID: []byte(`2`), Ref: "arca://app/nope"}),
		f.svc.Read(ctx, list, Request{ID: []byte(`3`)}),
		f.svc.Read(ctx, get, Request{ID: []byte(`4`)}),
		f.svc.Read(ctx, put, Request{ID: []byte(`5`), Ref: "arca://app/db", Value: secret("v2")}),
	}
	if f.events.Len() != 0 {
		t.Fatalf("reads run ahead wrote events: %s", f.events)
	}
	wantCodes := []manifest.Code{"", manifest.NotFound, "", manifest.BadRequest, manifest.UnknownOp}
	for i := len(reads) - 1; i >= 0; i-- { // finished in reverse: audited in reverse
		res, err := reads[i].Finish()
		if CodeOf(err) != wantCodes[i] && !(wantCodes[i] == "" && err == nil) {
			t.Errorf("read %d: %v, want %q", i+1, err, wantCodes[i])
		}
		if g, ok := res.(GetResult); i == 0 && (!ok || string(g.Value.Reveal()) != "v1") {
			t.Errorf("read 1: %#v, want the value", res)
		}
	}
	ev := f.lines(t)
	if len(ev) != len(reads) {
		t.Fatalf("%d events, want %d", len(ev), len(reads))
	}
	for i, e := range ev {
		if want := fmt.Sprint(len(reads) - i); string(e.ID) != want || e.Seq != ev[0].Seq+uint64(i) {
			t.Errorf("event %d: id %s seq %d, want id %s seq %d", i, e.ID, e.Seq, want, ev[0].Seq+uint64(i))
		}
	}
	if r, err := f.svc.Get(ctx, Request{Ref: "arca://app/db"}); err != nil || r.Version != 1 {
		t.Errorf("after a put handed to Read: %+v %v, want version 1", r, err)
	}
}
