package ops

import (
	"context"
	"testing"

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
		case op.Meta && ok:
			t.Errorf("meta-op %q has an ops handler: serve answers it", op.Name)
		case op.Meta:
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
	for _, name := range []string{"manifest", "nope"} {
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
