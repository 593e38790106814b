package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/arca-secrets/arca/manifest"
)

// strictJSON reports why b is not one I-JSON text (RFC 7493), or nil: valid
// JSON, valid UTF-8, no lone surrogate escape in a string, and no name
// repeated in an object, names compared after unescaping. It is what a
// strict reader (Go's encoding/json/v2) takes, checked apart from serve's
// own decoder.
func strictJSON(b []byte) error {
	if !utf8.Valid(b) {
		return errors.New("not UTF-8")
	}
	if !json.Valid(b) {
		return errors.New("not JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // a number's size is a SHOULD of I-JSON: serve echoes any
	type object struct {
		names   map[string]bool
		wantKey bool
	}
	var open []*object
	for {
		before := dec.InputOffset()
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if _, ok := tok.(string); ok && loneSurrogate(string(b[before:dec.InputOffset()])) {
			return fmt.Errorf("a lone surrogate escape in %s", b[before:dec.InputOffset()])
		}
		var top *object
		if len(open) > 0 {
			top = open[len(open)-1]
		}
		switch tok {
		case json.Delim('{'):
			if top != nil {
				top.wantKey = true // the object is this key's value
			}
			open = append(open, &object{names: map[string]bool{}, wantKey: true})
			continue
		case json.Delim('['):
			if top != nil {
				top.wantKey = true
			}
			open = append(open, nil)
			continue
		case json.Delim('}'), json.Delim(']'):
			open = open[:len(open)-1]
			continue
		}
		switch {
		case top == nil:
		case top.wantKey:
			name := tok.(string)
			if top.names[name] {
				return fmt.Errorf("the name %q is repeated", name)
			}
			top.names[name], top.wantKey = true, false
		default:
			top.wantKey = true
		}
	}
}

// loneSurrogate reports whether the JSON string literal lit (with the
// separators around it) holds a \u escape of half a surrogate pair alone.
func loneSurrogate(lit string) bool {
	half := func(i int) (high, low bool) {
		if i+6 > len(lit) || lit[i] != '\\' || lit[i+1] != 'u' {
			return false, false
		}
		var r rune
		if _, err := fmt.Sscanf(lit[i+2:i+6], "%04x", &r); err != nil {
			return false, false
		}
		return 0xd800 <= r && r < 0xdc00, 0xdc00 <= r && r < 0xe000
	}
	for i := 0; i < len(lit); i++ {
		if lit[i] != '\\' {
			continue
		}
		high, low := half(i)
		switch {
		case low:
			return true
		case high:
			if _, next := half(i + 6); !next {
				return true
			}
			i += 11
		default:
			i++ // the escaped byte
		}
	}
	return false
}

func TestStrictJSON(t *testing.T) {
	for _, c := range []struct {
		in string
		ok bool
	}{
		{`{"a":1,"b":{"a":2},"c":[{"a":1},{"a":2}]}`, true},
		{`"\ud83d\ude00 \\ud800"`, true},
		{`{"a":1,"a":2}`, false},
		{`{"a":1,"\u0061":2}`, false},
		{`[{"x":{"k":[],"k":{}}}]`, false},
		{`{"a":{"b":1},"b":2,"a":3}`, false},
		{`"\ud800"`, false},
		{`"\udc00\ud800"`, false},
		{"\"\xff\"", false},
	} {
		if err := strictJSON([]byte(c.in)); (err == nil) != c.ok {
			t.Errorf("strictJSON(%s) = %v, want ok %v", c.in, err, c.ok)
		}
	}
}

// A name repeated in an object anywhere in the id is bad_request, the id
// not echoed: serve copies the id into the response and the audit event,
// and both must stay I-JSON. The same names in different objects are fine.
func TestDecodeRefusesRepeatedNamesInTheID(t *testing.T) {
	deep := strings.Repeat(`[`, manifest.MaxDepth-2) + `{"k":1,"k":2}` + strings.Repeat(`]`, manifest.MaxDepth-2)
	many := `{`
	for i := range 300 {
		many += fmt.Sprintf(`"n%d":0,`, 299-i)
	}
	for _, c := range []struct {
		name, id, dup string
	}{
		{"top of the id", `{"a":1,"a":2}`, "a"},
		{"same value", `{"a":1,"a":1}`, "a"},
		{"escaped to the same name", `{"job":1,"\u006aob":2}`, "job"},
		{"nested in an array", `[1,{"x":{"k":[],"k":{}}}]`, "k"},
		{"after a nested object", `{"a":{"b":1},"b":2,"a":3}`, "a"},
		{"at the depth limit", deep, "k"},
		{"among many names", many + `"n7":1}`, "n7"},
		{"the empty name", `{"":1,"":2}`, ""},
	} {
		line := `{"op":"manifest","id":` + c.id + `}`
		req, problem := decodeRequest([]byte(line), nil)
		want := fmt.Sprintf(`field "id" repeats the name %q in an object`, c.dup)
		if problem != want || req.ID != nil {
			t.Errorf("%s: id %q, problem %q; want no id and %q", c.name, req.ID, problem, want)
		}
	}
	for _, id := range []string{
		`{"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}]}`,
		`{"ab":1,"a":2,"b":3,"a\u0000":4}`,
		many + `"n300":1}`,
		`["a","a",{"a":"a"}]`,
	} {
		line := `{"op":"manifest","id":` + id + `}`
		if req, problem := decodeRequest([]byte(line), nil); problem != "" || string(req.ID) != id {
			t.Errorf("id %s: kept %q, problem %q; want it kept", short(id), short(string(req.ID)), problem)
		}
	}
}

// Through arca serve as users run it: a name repeated in an object anywhere
// in a request, a lone surrogate or a byte that is not UTF-8 is
// bad_request, and every line serve writes, responses and audit events, is
// I-JSON by a reader that refuses repeated names.
func TestServeWritesOnlyIJSON(t *testing.T) {
	b := buildArca(t)
	requests := []struct{ line, message string }{
		{`{"op":"manifest","id":{"a":1,"a":2}}`, `field "id" repeats the name "a" in an object`},
		{`{"op":"manifest","id":[{"job":{"step":1,"\u0073tep":2}}]}`, `field "id" repeats the name "step" in an object`},
		{`{"id":{"a":1,"a":2},"op":"get","ref":"arca://app/db"}`, `field "id" repeats the name "a" in an object`},
		{`{"op":"manifest","x":{"a":1,"a":2}}`, `unknown field "x"`},
		{`{"op":"manifest","op":"manifest"}`, `duplicate field "op"`},
		{`{"op":"manifest","id":"\ud800"}`, `request is not valid JSON`},
		{`{"op":"manifest","id":"\udc00\ud83d"}`, `request is not valid JSON`},
		{"{\"op\":\"manifest\",\"id\":\"\xed\xa0\x80\"}", `request is not valid UTF-8`},
		{`{"op":"manifest","id":{"a":{"a":1},"b":[{"a":1},{"a":2}],"c":"\ud83d\ude00"}}`, ""},
	}
	var in strings.Builder
	for _, r := range requests {
		in.WriteString(r.line + "\n")
	}
	stdout, stderr, err := b.serve(t, in.String())
	if err != nil {
		t.Fatalf("arca serve: %v\n%s", err, stderr)
	}
	out := strings.Split(strings.TrimSuffix(string(stdout), "\n"), "\n")
	if len(out) != len(requests) {
		t.Fatalf("%d responses to %d requests:\n%s", len(out), len(requests), stdout)
	}
	for i, r := range requests {
		var resp struct {
			ID    json.RawMessage `json:"id"`
			OK    bool            `json:"ok"`
			Error struct{ Code, Message string }
		}
		if err := json.Unmarshal([]byte(out[i]), &resp); err != nil {
			t.Fatalf("response %d: %v: %s", i+1, err, out[i])
		}
		switch {
		case r.message == "" && !resp.OK:
			t.Errorf("request %d %s: %s, want success", i+1, r.line, out[i])
		case r.message != "" && (resp.OK || resp.Error.Code != "bad_request" || !strings.HasPrefix(resp.Error.Message, r.message) || string(resp.ID) != "null"):
			t.Errorf("request %d %s: %s, want bad_request %q with id null", i+1, r.line, out[i], r.message)
		}
	}
	events := strings.Split(strings.TrimSuffix(string(stderr), "\n"), "\n")
	if len(events) != len(requests)+2 { // the start and stop events
		t.Errorf("%d audit lines for %d requests:\n%s", len(events), len(requests), stderr)
	}
	for name, ls := range map[string][]string{"response": out, "audit event": events} {
		for i, l := range ls {
			if err := strictJSON([]byte(l)); err != nil {
				t.Errorf("%s %d is not I-JSON (%v): %s", name, i+1, err, l)
			}
		}
	}
}

// The cost of decoding a request line, with the id of each kind: the check
// for repeated names costs only ids that hold objects.
func BenchmarkDecodeRequest(b *testing.B) {
	for _, c := range []struct{ name, line string }{
		{"number id", `{"id":7,"op":"get","ref":"arca://app/db"}`},
		{"string id", `{"id":"req-7f3a","op":"get","ref":"arca://app/db","env":"prod"}`},
		{"object id", `{"id":{"job":7,"step":[1,2],"trace":{"span":"a1","parent":"b2"}},"op":"get","ref":"arca://app/db"}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			line := []byte(c.line)
			b.ReportAllocs()
			for b.Loop() {
				if _, problem := decodeRequest(line, nil); problem != "" {
					b.Fatal(problem)
				}
			}
		})
	}
}

// A session's requests that repeat their keys and short fields (op, ref,
// env, actor) decode without allocating; a value is copied every time and
// never held, and a text that changes is decoded as sent.
func TestDecodeInterned(t *testing.T) {
	var names interner
	get := []byte(`{"id":7,"op":"get","ref":"arca://app/db","env":"prod","actor":"agent:ci"}`)
	decodeRequest(get, &names)
	if n := testing.AllocsPerRun(100, func() { decodeRequest(get, &names) }); n != 0 {
		t.Errorf("a repeated get allocates %v times, want 0", n)
	}
	put := []byte(`{"op":"put","ref":"arca://app/db","value":"s3cret"}`)
	decodeRequest(put, &names)
	if n := testing.AllocsPerRun(100, func() { decodeRequest(put, &names) }); n == 0 {
		t.Error("a put's value was not copied")
	}
	if slices.Contains(names.last[:], "s3cret") {
		t.Error("the interner holds a value")
	}
	req, problem := decodeRequest([]byte(`{"op":"get","ref":"arca://app/d\u0062","actor":"agent:ci"}`), &names)
	if problem != "" || req.Ref != "arca://app/db" || req.Actor != "agent:ci" || req.Op != "get" {
		t.Errorf("escaped ref through the interner: %+v, %q", req, problem)
	}
	for i := range 3 {
		ref := fmt.Sprintf("arca://app/r%d", i)
		if req, _ := decodeRequest(fmt.Appendf(nil, `{"op":"get","ref":%q}`, ref), &names); req.Ref != ref {
			t.Errorf("ref %q decoded as %q", ref, req.Ref)
		}
	}
	long := strings.Repeat("x", internLen+1)
	decodeRequest(fmt.Appendf(nil, `{"op":"get","ref":"arca://app/%s"}`, long), &names)
	if slices.Contains(names.last[:], "arca://app/"+long) {
		t.Errorf("the interner holds a text of %d bytes", len(long)+11)
	}
}
