package serve

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/manifest"
)

// want is one expected reply.
type want struct {
	id   string   // the raw id bytes expected; "" = not checked
	code string   // "" = success
	msg  string   // a substring the error message must hold
	not  []string // substrings the error message must not hold
}

func ok(id string) want { return want{id: id} }

func bad(id, msg string, not ...string) want {
	return want{id: id, code: "bad_request", msg: msg, not: not}
}

func unknownOp(id, msg string) want { return want{id: id, code: "unknown_op", msg: msg} }

// lines joins request lines, each ending in "\n".
func lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

// pad returns a request line of exactly n bytes: prefix, spaces, "}".
func pad(prefix string, n int) string {
	return prefix + strings.Repeat(" ", n-len(prefix)-1) + "}"
}

type attack struct {
	name  string
	in    string
	want  []want
	vault bool // the vault may be reached; otherwise nothing may touch it
}

// checkReplies compares a transcript's replies with want, in order.
func checkReplies(t *testing.T, tr transcript, ws []want) {
	t.Helper()
	rs := tr.responses(t)
	if len(rs) != len(ws) {
		t.Errorf("%d replies, want %d:\n%s", len(rs), len(ws), short(strings.Join(tr.stdout, "\n")))
	}
	for i := range min(len(rs), len(ws)) {
		r, w := rs[i], ws[i]
		if w.id != "" && string(r.ID) != w.id {
			t.Errorf("reply %d: id %s, want %s", i+1, short(string(r.ID)), short(w.id))
		}
		switch {
		case w.code == "" && !r.OK:
			t.Errorf("reply %d: %s %q, want success", i+1, r.code(), r.message())
		case w.code != "" && r.code() != w.code:
			t.Errorf("reply %d: code %q (%q), want %s", i+1, r.code(), r.message(), w.code)
		case w.code != "" && !strings.Contains(r.message(), w.msg):
			t.Errorf("reply %d: message %q does not hold %q", i+1, r.message(), w.msg)
		}
		for _, n := range w.not {
			if strings.Contains(r.message(), n) {
				t.Errorf("reply %d: message %q holds %q", i+1, short(r.message()), short(n))
			}
		}
	}
}

func runAttacks(t *testing.T, toml string, attacks []attack) {
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			f := newFixtureConfig(t, toml)
			tr := f.serve(t, a.in)
			checkReplies(t, tr, a.want)
			if n := f.spy.touched(); !a.vault && n != 0 {
				t.Errorf("a doomed request reached the vault: %d opens and calls %v", n, f.spy.calls)
			}
		})
	}
}

const (
	maxLine = manifest.MaxLine
	tooLong = "request line is longer than 4194304 bytes"
	notJSON = "request is not valid JSON"
	notObj  = "request must be one JSON object"
	trail   = "request has data after the JSON object"
	notStr  = "must be a string"
	notUTF8 = "request is not valid UTF-8"
	tooDeep = "request nests deeper than 32 levels"
)

// nested is a JSON value of n arrays, one inside the other.
func nested(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

// TestAttacks lists the ways a request line can try to trick serve, one
// named row each.
func TestAttacks(t *testing.T) {
	att64k := strings.Repeat("A", manifest.MaxAttestation)
	atCap := pad(`{"op":"list","id":"max","attestation":"`+att64k+`"`, maxLine)
	overCap := pad(`{"op":"list","id":1`, maxLine+1)
	ref1024 := "arca://" + strings.Repeat("a", 1024-len("arca://"))
	ref1025 := ref1024 + "a"
	val := func(n int) string { return strings.Repeat("v", n) }
	cliVerbs := manifest.CLIOnly()
	if len(cliVerbs) != 15 {
		t.Fatalf("CLI-only verbs changed: %q", cliVerbs)
	}

	attacks := []attack{
		// Line bounds.
		{name: "oversized line then a valid one", in: overCap + "\n" + `{"op":"list","id":2}` + "\n",
			want: []want{bad("null", tooLong), ok("2")}, vault: true},
		{name: "oversized line at EOF without newline", in: overCap,
			want: []want{bad("null", tooLong)}},
		{name: "oversized line of bare bytes", in: strings.Repeat("x", 3*maxLine) + "\n" + `{"op":"manifest","id":2}` + "\n",
			want: []want{bad("null", tooLong), ok("2")}},
		{name: "two oversized lines back to back", in: overCap + "\n" + overCap + "\n" + `{"op":"manifest","id":3}` + "\n",
			want: []want{bad("null", tooLong), bad("null", tooLong), ok("3")}},
		{name: "line of exactly 4 MiB with a 64 KiB attestation is processed", in: atCap + "\n" + `{"op":"manifest","id":2}` + "\n",
			want: []want{ok(`"max"`), ok("2")}, vault: true},
		{name: "line of exactly 4 MiB at EOF without newline", in: atCap,
			want: []want{ok(`"max"`)}, vault: true},

		// Blank lines and line endings.
		{name: "blank lines get no reply", in: "\n \n\t\n\r\n \t\r \n\r\r\n" + `{"op":"manifest","id":"alive"}` + "\n\n\n",
			want: []want{ok(`"alive"`)}},
		{name: "only blank lines", in: "\n\n \r\n\t\n"},
		{name: "form feed is not blank", in: "\f\n", want: []want{bad("null", notObj)}},
		{name: "vertical tab is not blank", in: "\v\n", want: []want{bad("null", notObj)}},
		{name: "no-break space is not blank", in: "\u00a0\n", want: []want{bad("null", notObj)}},
		{name: "NUL is not blank", in: "\x00\n", want: []want{bad("null", notObj)}},
		{name: "CRLF endings", in: "{\"op\":\"manifest\",\"id\":1}\r\n{\"op\":\"manifest\",\"id\":2}\r\n",
			want: []want{ok("1"), ok("2")}},
		{name: "CR inside the object is whitespace", in: "{\"op\":\"manifest\",\r\"id\":1}\n", want: []want{ok("1")}},
		{name: "EOF without trailing newline processes the last line", in: `{"op":"manifest","id":1}` + "\n" + `{"op":"manifest","id":"last"}`,
			want: []want{ok("1"), ok(`"last"`)}},
		{name: "EOF exits", in: ""},

		// UTF-8.
		{name: "invalid byte inside a string", in: lines(`{"op":"manifest","id":"` + "\xff" + `"}`), want: []want{bad("null", notUTF8)}},
		{name: "truncated sequence inside a string", in: lines(`{"op":"manifest","actor":"` + "\xc3\x28" + `"}`), want: []want{bad("null", notUTF8)}},
		{name: "overlong encoding inside a string", in: lines(`{"op":"manifest","actor":"` + "\xc0\xaf" + `"}`), want: []want{bad("null", notUTF8)}},
		{name: "UTF-8 encoded surrogate inside a value", in: lines(`{"op":"put","ref":"arca://a/b","value":"` + "\xed\xa0\x80" + `"}`), want: []want{bad("null", notUTF8)}},
		{name: "sequence cut at the closing quote", in: lines(`{"op":"manifest","actor":"` + "\xe2\x82" + `"}`), want: []want{bad("null", notUTF8)}},
		{name: "invalid byte in a key", in: lines(`{"` + "\xff" + `":1,"op":"manifest"}`), want: []want{bad("null", notUTF8)}},
		{name: "invalid byte after a long valid prefix", in: lines(`{"op":"manifest","id":1,"actor":"` + strings.Repeat("a", 200) + "\xff" + `"}`), want: []want{bad("null", notUTF8)}},
		{name: "invalid byte before the object", in: lines("\xff" + `{"op":"manifest"}`), want: []want{bad("null", notUTF8)}},
		{name: "invalid byte after the object", in: lines(`{"op":"manifest"}` + "\xff"), want: []want{bad("null", notUTF8)}},
		{name: "invalid byte between members", in: lines(`{"op":"manifest",` + "\xff" + `"id":1}`), want: []want{bad("null", notUTF8)}},
		{name: "invalid byte after a key", in: lines(`{"op"` + "\xff" + `:"manifest"}`), want: []want{bad("null", notUTF8)}},
		{name: "lone surrogate escape", in: lines(`{"op":"manifest","actor":"\ud800"}`), want: []want{bad("null", notJSON)}},
		{name: "reversed surrogate pair escape", in: lines(`{"op":"manifest","actor":"\udc00\ud800"}`), want: []want{bad("null", notJSON)}},
		{name: "byte order mark", in: lines("\ufeff" + `{"op":"manifest"}`), want: []want{bad("null", notObj)}},

		// Not one object.
		{name: "array", in: lines(`[]`), want: []want{bad("null", notObj)}},
		{name: "array holding a request", in: lines(`[{"op":"manifest"}]`), want: []want{bad("null", notObj)}},
		{name: "string", in: lines(`"manifest"`), want: []want{bad("null", notObj)}},
		{name: "number", in: lines(`42`), want: []want{bad("null", notObj)}},
		{name: "null", in: lines(`null`), want: []want{bad("null", notObj)}},
		{name: "true", in: lines(`true`), want: []want{bad("null", notObj)}},
		{name: "unclosed object", in: lines(`{"op":"manifest"`), want: []want{bad("null", notJSON)}},
		{name: "lone brace", in: lines(`{`), want: []want{bad("null", notJSON)}},
		{name: "form encoding", in: lines(`op=manifest`), want: []want{bad("null", notObj)}},
		{name: "single quotes", in: lines(`{'op':'manifest'}`), want: []want{bad("null", notJSON)}},
		{name: "trailing comma", in: lines(`{"op":"manifest",}`), want: []want{bad("null", notJSON)}},
		{name: "comment", in: lines(`{"op":"manifest"/*x*/}`), want: []want{bad("null", notJSON)}},

		// Trailing data.
		{name: "trailing word", in: lines(`{"op":"manifest"} x`), want: []want{bad("null", trail)}},
		{name: "trailing object", in: lines(`{"op":"manifest"}{}`), want: []want{bad("null", trail)}},
		{name: "second request on the line", in: lines(`{"op":"manifest","id":1} {"op":"manifest","id":2}`), want: []want{bad("null", trail)}},
		{name: "trailing comma after the object", in: lines(`{"op":"manifest"},`), want: []want{bad("null", trail)}},
		{name: "trailing brace", in: lines(`{"op":"manifest"}}`), want: []want{bad("null", trail)}},
		{name: "trailing NUL", in: lines(`{"op":"manifest"}` + "\x00"), want: []want{bad("null", trail)}},

		// Duplicate keys.
		{name: "op twice", in: lines(`{"op":"manifest","op":"manifest"}`), want: []want{bad("null", `duplicate field "op"`)}},
		{name: "op twice, different ops", in: lines(`{"id":1,"op":"manifest","op":"shutdown"}`), want: []want{bad("1", `duplicate field "op"`)}},
		{name: "id twice echoes neither", in: lines(`{"id":1,"op":"manifest","id":2}`), want: []want{bad("null", `duplicate field "id"`)}},
		{name: "id twice, same value", in: lines(`{"id":1,"op":"manifest","id":1}`), want: []want{bad("null", `duplicate field "id"`)}},
		{name: "ref twice", in: lines(`{"op":"get","ref":"arca://a/b","ref":"arca://a/c"}`), want: []want{bad("null", `duplicate field "ref"`)}},
		{name: "value twice", in: lines(`{"op":"put","ref":"arca://a/b","value":"x","value":"y"}`), want: []want{bad("null", `duplicate field "value"`, "x", "y")}},
		{name: "key spelled with an escape is the same key", in: lines(`{"op":"manifest","o\u0070":"manifest"}`), want: []want{bad("null", `duplicate field "op"`)}},
		{name: "escaped key is decoded", in: lines(`{"o\u0070":"manifest","\u0069d":7}`), want: []want{ok("7")}},

		// Keys match exactly.
		{name: "Op", in: lines(`{"Op":"manifest"}`), want: []want{bad("null", `unknown field "Op"`)}},
		{name: "OP", in: lines(`{"OP":"manifest"}`), want: []want{bad("null", `unknown field "OP"`)}},
		{name: "ID", in: lines(`{"op":"manifest","ID":1}`), want: []want{bad("null", `unknown field "ID"`)}},
		{name: "Ref beside ref", in: lines(`{"op":"get","ref":"arca://a/b","Ref":"arca://a/c"}`), want: []want{bad("null", `unknown field "Ref"`)}},
		{name: "op value in capitals", in: lines(`{"op":"MANIFEST"}`), want: []want{unknownOp("null", `unknown op "MANIFEST"`)}},

		// Unknown fields.
		{name: "unknown field keeps the id", in: lines(`{"op":"manifest","id":5,"extra":true}`), want: []want{bad("5", `unknown field "extra"`)}},
		{name: "unknown field before the id", in: lines(`{"extra":{"a":[1,{"b":null}]},"op":"manifest","id":5}`), want: []want{bad("5", `unknown field "extra"`)}},
		{name: "empty key", in: lines(`{"op":"manifest","":1}`), want: []want{bad("null", `unknown field ""`)}},
		{name: "long unknown key is cut", in: lines(`{"op":"manifest","` + strings.Repeat("k", 300) + `":1}`),
			want: []want{bad("null", `unknown field "`+strings.Repeat("k", 64)+`"…`, strings.Repeat("k", 65))}},
		{name: "unknown field with invalid JSON", in: lines(`{"op":"manifest","x":[1,]}`), want: []want{bad("null", notJSON)}},
		{name: "unknown field value is not echoed", in: lines(`{"op":"manifest","x":"UNKNOWN-VALUE-93"}`), want: []want{bad("null", `unknown field "x"`, "UNKNOWN-VALUE-93")}},

		// Wrong types.
		{name: "op number", in: lines(`{"op":1}`), want: []want{bad("null", `field "op" `+notStr)}},
		{name: "op null", in: lines(`{"op":null}`), want: []want{bad("null", `field "op" `+notStr)}},
		{name: "op array", in: lines(`{"op":["manifest"]}`), want: []want{bad("null", `field "op" `+notStr)}},
		{name: "ref null", in: lines(`{"op":"get","ref":null}`), want: []want{bad("null", `field "ref" `+notStr)}},
		{name: "value object", in: lines(`{"op":"put","ref":"arca://a/b","value":{}}`), want: []want{bad("null", `field "value" `+notStr)}},
		{name: "value number", in: lines(`{"op":"put","ref":"arca://a/b","value":42}`), want: []want{bad("null", `field "value" `+notStr, "42")}},
		{name: "actor array", in: lines(`{"op":"list","actor":[]}`), want: []want{bad("null", `field "actor" `+notStr)}},
		{name: "env bool", in: lines(`{"op":"list","env":true}`), want: []want{bad("null", `field "env" `+notStr)}},
		{name: "attestation number", in: lines(`{"op":"list","attestation":1}`), want: []want{bad("null", `field "attestation" `+notStr)}},

		// Caps: at the cap passes the decoder, one byte over is refused naming the cap.
		{name: "ref over its cap", in: lines(`{"op":"get","ref":"` + ref1025 + `"}`), want: []want{bad("null", `field "ref" is larger than 1024 bytes`)}},
		{name: "ref at its cap fails the ref grammar", in: lines(`{"op":"get","ref":"` + ref1024 + `"}`), want: []want{bad("null", "invalid ref", "1024")}},
		{name: "value at its cap", in: lines(`{"op":"put","ref":"arca://a/b","value":"` + val(manifest.MaxValue) + `"}`), want: []want{ok("null")}, vault: true},
		{name: "value over its cap", in: lines(`{"op":"put","ref":"arca://a/b","value":"` + val(manifest.MaxValue+1) + `"}`),
			want: []want{bad("null", `field "value" is larger than 65536 bytes`, "vvvv")}},
		{name: "value cap counts decoded bytes", in: lines(`{"op":"put","ref":"arca://a/b","value":"` + strings.Repeat(`\u00e9`, manifest.MaxValue/2) + `"}`),
			want: []want{ok("null")}, vault: true},
		{name: "value cap counts decoded bytes, over", in: lines(`{"op":"put","ref":"arca://a/b","value":"` + strings.Repeat(`\u00e9`, manifest.MaxValue/2+1) + `"}`),
			want: []want{bad("null", `field "value" is larger than 65536 bytes`)}},
		{name: "actor at its cap", in: lines(`{"op":"list","actor":"` + strings.Repeat("a", manifest.MaxActor) + `"}`), want: []want{ok("null")}, vault: true},
		{name: "actor over its cap", in: lines(`{"op":"list","actor":"` + strings.Repeat("a", manifest.MaxActor+1) + `"}`), want: []want{bad("null", `field "actor" is larger than 256 bytes`)}},
		{name: "actor cap counts bytes not characters", in: lines(`{"op":"list","actor":"` + strings.Repeat("é", manifest.MaxActor/2) + `"}`), want: []want{ok("null")}, vault: true},
		{name: "actor cap counts bytes not characters, over", in: lines(`{"op":"list","actor":"` + strings.Repeat("é", manifest.MaxActor/2+1) + `"}`),
			want: []want{bad("null", `field "actor" is larger than 256 bytes`)}},
		{name: "attestation at its cap", in: lines(`{"op":"list","attestation":"` + att64k + `"}`), want: []want{ok("null")}, vault: true},
		{name: "attestation over its cap", in: lines(`{"op":"list","attestation":"` + att64k + `A"}`),
			want: []want{bad("null", `field "attestation" is larger than 65536 bytes`, "AAAA")}},
		{name: "env at its cap is looked up", in: lines(`{"op":"list","env":"` + strings.Repeat("e", manifest.MaxSegment) + `"}`), want: []want{bad("null", "unknown env")}},
		{name: "env over its cap", in: lines(`{"op":"list","env":"` + strings.Repeat("e", manifest.MaxSegment+1) + `"}`), want: []want{bad("null", `field "env" is larger than 128 bytes`)}},
		{name: "id over its cap", in: lines(`{"op":"manifest","id":"` + strings.Repeat("i", manifest.MaxID-1) + `"}`), want: []want{bad("null", `field "id" is larger than 4096 bytes`)}},
		{name: "id over its cap as a number", in: lines(`{"op":"manifest","id":1` + strings.Repeat("0", manifest.MaxID) + `}`), want: []want{bad("null", `field "id" is larger than 4096 bytes`)}},
		{name: "id nested past its cap", in: lines(`{"op":"manifest","id":` + strings.Repeat("[", 2049) + strings.Repeat("]", 2049) + `}`),
			want: []want{bad("null", tooDeep)}},
		{name: "id nested a million deep", in: lines(`{"op":"manifest","id":` + strings.Repeat("[", 1<<20) + `}`),
			want: []want{bad("null", tooDeep)}},
		{name: "unknown field nested a million deep", in: lines(`{"op":"manifest","x":` + strings.Repeat("[", 1<<20) + strings.Repeat("]", 1<<20) + `}`),
			want: []want{bad("null", tooDeep)}},

		// Nesting: the request object is the first level; MaxDepth levels
		// are served, one more is refused wherever it is, and the next line
		// is served.
		{name: "id nested to the depth limit", in: lines(`{"op":"list","id":` + nested(manifest.MaxDepth-1) + `}`),
			want: []want{ok(nested(manifest.MaxDepth - 1))}, vault: true},
		{name: "id of objects nested to the depth limit", in: lines(`{"op":"list","id":` + strings.Repeat(`{"a":`, manifest.MaxDepth-2) + `{}` + strings.Repeat("}", manifest.MaxDepth-2) + `}`),
			want: []want{ok(strings.Repeat(`{"a":`, manifest.MaxDepth-2) + `{}` + strings.Repeat("}", manifest.MaxDepth-2))}, vault: true},
		{name: "id nested one past the depth limit", in: lines(`{"op":"list","id":`+nested(manifest.MaxDepth)+`}`, `{"op":"list","id":2}`),
			want: []want{bad("null", tooDeep), ok("2")}, vault: true},
		{name: "id of objects nested one past the depth limit", in: lines(`{"op":"list","id":` + strings.Repeat(`{"a":`, manifest.MaxDepth-1) + `{}` + strings.Repeat("}", manifest.MaxDepth-1) + `}`),
			want: []want{bad("null", tooDeep)}},
		{name: "empty containers count as a level", in: lines(`{"op":"list","id":` + strings.Repeat("[", manifest.MaxDepth-1) + "{}" + strings.Repeat("]", manifest.MaxDepth-1) + `}`),
			want: []want{bad("null", tooDeep)}},
		{name: "spacing does not hide a level", in: lines(`{"op":"list","id": ` + strings.Repeat("[ \t", manifest.MaxDepth) + strings.Repeat(" ]", manifest.MaxDepth) + `}`),
			want: []want{bad("null", tooDeep)}},
		{name: "brackets inside strings are no level", in: lines(`{"op":"put","ref":"arca://a/b","value":"` + nested(1000) + `","actor":"` + strings.Repeat("{", 200) + `","id":["` + strings.Repeat(`[{\"`, 100) + `"]}`),
			want: []want{ok(`["` + strings.Repeat(`[{\"`, 100) + `"]`)}, vault: true},
		{name: "unknown field nested to the depth limit", in: lines(`{"op":"list","x":` + nested(manifest.MaxDepth-1) + `}`),
			want: []want{bad("null", `unknown field "x"`)}},
		{name: "unknown field nested one past the depth limit", in: lines(`{"op":"list","id":1,"x":` + nested(manifest.MaxDepth) + `}`),
			want: []want{bad("null", tooDeep)}},
		{name: "string field nested to the depth limit", in: lines(`{"op":"list","id":1,"env":` + nested(manifest.MaxDepth-1) + `}`),
			want: []want{bad("1", `field "env" `+notStr)}},
		{name: "string field nested one past the depth limit", in: lines(`{"op":"list","id":1,"env":` + nested(manifest.MaxDepth) + `}`),
			want: []want{bad("null", tooDeep)}},
		{name: "duplicate field nested one past the depth limit", in: lines(`{"op":"list","id":1,"op":` + nested(manifest.MaxDepth) + `}`),
			want: []want{bad("null", tooDeep)}},
		{name: "nesting past the limit wins over an earlier problem", in: lines(`{"op":"list","y":1,"id":1,"x":` + nested(manifest.MaxDepth) + `}`),
			want: []want{bad("null", tooDeep)}},
		{name: "nesting past the limit in invalid JSON", in: lines(`{"op":"list","id":` + strings.Repeat("[", manifest.MaxDepth) + `,]}`),
			want: []want{bad("null", tooDeep)}},

		{name: "op at its cap is looked up", in: lines(`{"op":"` + strings.Repeat("o", manifest.MaxOp) + `"}`), want: []want{unknownOp("null", "unknown op")}},
		{name: "op over its cap", in: lines(`{"op":"` + strings.Repeat("o", manifest.MaxOp+1) + `"}`), want: []want{bad("null", `field "op" is larger than 64 bytes`)}},

		// Which ops take ref and value.
		{name: "empty request", in: lines(`{}`), want: []want{bad("null", `field "op" is required`)}},
		{name: "only an id", in: lines(`{"id":3}`), want: []want{bad("3", `field "op" is required`)}},
		{name: "get without ref", in: lines(`{"op":"get"}`), want: []want{bad("null", `get needs field "ref"`)}},
		{name: "rm without ref", in: lines(`{"op":"rm"}`), want: []want{bad("null", `rm needs field "ref"`)}},
		{name: "put without value", in: lines(`{"op":"put","ref":"arca://a/b"}`), want: []want{bad("null", `put needs field "value"`)}},
		{name: "put without ref", in: lines(`{"op":"put","value":"v"}`), want: []want{bad("null", `put needs field "ref"`)}},
		{name: "rotate without value", in: lines(`{"op":"rotate","ref":"arca://a/b"}`), want: []want{bad("null", `rotate needs field "value"`)}},
		{name: "put with an empty value", in: lines(`{"op":"put","ref":"arca://a/b","value":""}`), want: []want{bad("null", "value is empty")}},
		{name: "rotate with an empty value", in: lines(`{"op":"rotate","ref":"arca://a/b","value":""}`), want: []want{bad("null", "value is empty")}},
		{name: "get with an empty ref", in: lines(`{"op":"get","ref":""}`), want: []want{bad("null", "ref is empty")}},
		{name: "list with ref", in: lines(`{"op":"list","ref":"arca://a/b"}`), want: []want{bad("null", `list takes no field "ref"`)}},
		{name: "list with an empty ref", in: lines(`{"op":"list","ref":""}`), want: []want{bad("null", `list takes no field "ref"`)}},
		{name: "check with value", in: lines(`{"op":"check","value":"v"}`), want: []want{bad("null", `check takes no field "value"`)}},
		{name: "get with an empty value", in: lines(`{"op":"get","ref":"arca://a/b","value":""}`), want: []want{bad("null", `get takes no field "value"`)}},
		{name: "rm with value", in: lines(`{"op":"rm","ref":"arca://a/b","value":"v"}`), want: []want{bad("null", `rm takes no field "value"`)}},
		{name: "manifest with ref", in: lines(`{"op":"manifest","ref":""}`), want: []want{bad("null", `manifest takes no field "ref"`)}},
		{name: "shutdown with value does not shut down", in: lines(`{"op":"shutdown","value":"","id":1}`, `{"op":"manifest","id":2}`),
			want: []want{bad("1", `shutdown takes no field "value"`), ok("2")}},

		// The order of checks.
		{name: "malformed and unknown op is bad_request", in: lines(`{"op":"nope","extra":1}`), want: []want{bad("null", `unknown field "extra"`)}},
		{name: "trailing data and unknown op is bad_request", in: lines(`{"op":"nope"} x`), want: []want{bad("null", trail)}},
		{name: "duplicate unknown op is bad_request", in: lines(`{"op":"run","op":"run"}`), want: []want{bad("null", `duplicate field "op"`)}},
		{name: "over-cap field and unknown op is bad_request", in: lines(`{"op":"nope","actor":"` + strings.Repeat("a", manifest.MaxActor+1) + `"}`),
			want: []want{bad("null", `field "actor" is larger than 256 bytes`)}},
		{name: "unknown op with a bad ref is unknown_op", in: lines(`{"op":"nope","ref":"bad"}`), want: []want{unknownOp("null", `unknown op "nope"`)}},
		{name: "unknown op with a missing value is unknown_op", in: lines(`{"op":"deploy","ref":"arca://a/b"}`), want: []want{unknownOp("null", `"deploy" is not served`)}},
		{name: "unknown op with an unknown env is unknown_op", in: lines(`{"op":"nope","env":"zzz"}`), want: []want{unknownOp("null", `unknown op "nope"`)}},
		{name: "missing ref before refused value", in: lines(`{"op":"get","value":"v"}`), want: []want{bad("null", `get needs field "ref"`)}},
		{name: "bad ref with an unknown env is about the ref", in: lines(`{"op":"get","ref":"bad","env":"zzz"}`), want: []want{bad("null", "invalid ref", "env")}},
		{name: "good ref with an unknown env", in: lines(`{"op":"get","ref":"arca://a/b","env":"zzz"}`), want: []want{bad("null", `unknown env "zzz"`)}},
		{name: "the ref's pin wins over env", in: lines(`{"op":"get","ref":"arca://zzz/a/b","env":"default"}`), want: []want{bad("null", `unknown env "zzz"`)}},
		{name: "the ref's pin wins over a bad env", in: lines(`{"op":"get","ref":"arca://default/a/b","env":"zzz"}`),
			want: []want{{id: "null", code: "not_found", msg: `arca://a/b not found in env "default"`}}, vault: true},
		{name: "invalid env name", in: lines(`{"op":"list","env":"../x"}`), want: []want{bad("null", "invalid env")}},
		{name: "actor with a control character", in: lines(`{"op":"list","actor":"a\u0007b"}`), want: []want{bad("null", "actor contains a control character")}},
		{name: "actor with a newline", in: lines(`{"op":"list","actor":"a\nb"}`), want: []want{bad("null", "actor contains a control character")}},
		{name: "manifest with an unknown env is answered", in: lines(`{"op":"manifest","env":"zzz","id":1}`), want: []want{ok("1")}},
		{name: "manifest with an invalid env is answered", in: lines(`{"op":"manifest","env":"../x","id":1}`), want: []want{ok("1")}},
		{name: "shutdown with an unknown env shuts down", in: lines(`{"op":"shutdown","env":"zzz","id":1}`, `{"op":"manifest","id":2}`),
			want: []want{ok("1")}},
		{name: "manifest with an env over its cap", in: lines(`{"op":"manifest","env":"` + strings.Repeat("e", manifest.MaxSegment+1) + `","id":1}`),
			want: []want{bad("1", `field "env" is larger than 128 bytes`)}},
		{name: "ref with dot-dot", in: lines(`{"op":"get","ref":"arca://../etc/passwd"}`), want: []want{bad("null", "invalid ref")}},
		{name: "ref with upper-case scheme", in: lines(`{"op":"get","ref":"ARCA://a/b"}`), want: []want{bad("null", "invalid ref")}},
		{name: "ref with four segments", in: lines(`{"op":"get","ref":"arca://default/a/b/c"}`), want: []want{bad("null", "invalid ref")}},
		{name: "ref with NUL", in: lines(`{"op":"get","ref":"arca://a/b\u0000c"}`), want: []want{bad("null", "invalid ref")}},
		{name: "not found reaches the vault", in: lines(`{"op":"get","ref":"arca://a/b","id":1}`),
			want: []want{{id: "1", code: "not_found", msg: "not found"}}, vault: true},

		// Shutdown.
		{name: "shutdown replies then ignores later lines", in: lines(`{"op":"shutdown","id":1}`, `{"op":"put","ref":"arca://a/b","value":"v","id":2}`, overCap, `garbage`),
			want: []want{ok("1")}},
	}
	for _, verb := range cliVerbs {
		attacks = append(attacks, attack{name: "CLI verb " + verb, in: lines(`{"op":"` + verb + `","id":"` + verb + `"}`),
			want: []want{unknownOp(strconv.Quote(verb), fmt.Sprintf("%q is not served — use the single-shot CLI", verb))}})
	}
	attacks = append(attacks,
		attack{name: "unknown op", in: lines(`{"op":"nope"}`), want: []want{unknownOp("null", `unknown op "nope"`)}},
		attack{name: "empty op", in: lines(`{"op":""}`), want: []want{unknownOp("null", `unknown op ""`)}},
		attack{name: "CLI verb with its arguments", in: lines(`{"op":"run","ref":"arca://a/b"}`), want: []want{unknownOp("null", `"run" is not served — use the single-shot CLI`)}},
	)
	runAttacks(t, "", attacks)
}

// TestGuardrailOrder: a guardrail denial comes after the request checks
// and before the vault.
func TestGuardrailOrder(t *testing.T) {
	const toml = `
[[guardrails.rule]]
env = "default"
ops = ["get", "put"]
ref = "prod/*"
reason = "no prod reads"
`
	const denied = "denied by guardrail: no prod reads"
	runAttacks(t, toml, []attack{
		{name: "denied", in: lines(`{"op":"get","ref":"arca://prod/db","id":1}`), want: []want{{id: "1", code: "denied", msg: denied}}},
		{name: "denied put never commits", in: lines(`{"op":"put","ref":"arca://prod/db","value":"GUARD-VALUE-1"}`),
			want: []want{{code: "denied", msg: denied, not: []string{"GUARD-VALUE-1"}}}},
		{name: "bad request before the guardrail", in: lines(`{"op":"get","ref":"arca://prod/db","value":""}`), want: []want{bad("null", `get takes no field "value"`)}},
		{name: "bad env before the guardrail", in: lines(`{"op":"get","ref":"arca://prod/db","env":"zzz"}`), want: []want{bad("null", `unknown env "zzz"`)}},
		{name: "unknown op before the guardrail", in: lines(`{"op":"nope","ref":"arca://prod/db"}`), want: []want{unknownOp("null", `unknown op "nope"`)}},
		{name: "meta-ops skip guardrails", in: lines(`{"op":"manifest","id":1}`, `{"op":"shutdown","id":2}`), want: []want{ok("1"), ok("2")}},
		{name: "other refs pass", in: lines(`{"op":"get","ref":"arca://dev/db"}`), want: []want{{code: "not_found", msg: "not found"}}, vault: true},
	})
}

// TestIDEchoedVerbatim: any JSON value up to 4 KiB comes back byte for byte,
// whitespace and escapes as sent, on success and on error.
func TestIDEchoedVerbatim(t *testing.T) {
	odd := `{"a" : [1, 2.5e3, "\u00e9"]}`
	fill := func(prefix, suffix string) string { // exactly MaxID bytes
		return prefix + strings.Repeat("x", manifest.MaxID-len(prefix)-len(suffix)) + suffix
	}
	ids := []struct{ name, id string }{
		{"number", "1"},
		{"negative exponent", "-0.5E-7"},
		{"string", `"a b"`},
		{"empty string", `""`},
		{"escapes", `"\n\t\"\\\/\u2028\ud83d\ude00"`},
		{"raw non-ASCII", "\"é\u2028😀\""},
		{"true", "true"},
		{"null", "null"},
		{"odd whitespace and escapes", odd},
		{"tabs inside", "[\t1 ,\t2\t]"},
		{"empty containers", `{"a":{},"b":[],"c":[{}]}`},
		{"the same names in different objects", `{"a":{"a":1},"b":[{"a":1},{"a":2}]}`},
		{"4096-byte string", fill(`"`, `"`)},
		{"4096-byte object with odd spacing", fill(`{"a" : [1, 2.5e3, "\u00e9"], "pad" : "`, `" }`)},
		{"4096-byte string of escapes", `"` + strings.Repeat(`\u00e9`, (manifest.MaxID-2)/6) + strings.Repeat(" ", (manifest.MaxID-2)%6) + `"`},
		{"4096-digit number", "1" + strings.Repeat("0", manifest.MaxID-1)},
		{"nested to the depth limit", nested(manifest.MaxDepth - 1)},
		{"objects nested to the depth limit", strings.Repeat(`{"a":`, manifest.MaxDepth-1) + "0" + strings.Repeat("}", manifest.MaxDepth-1) + "   "},
		{"4096 bytes nested to the depth limit", fill(strings.Repeat("[", manifest.MaxDepth-1)+`"`, `"`+strings.Repeat("]", manifest.MaxDepth-1))},
	}
	for _, c := range ids {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			id := strings.TrimRight(c.id, " ")
			if len(c.id) > manifest.MaxID {
				t.Fatalf("test id is %d bytes", len(c.id))
			}
			f := newFixture(t)
			tr := f.serve(t, lines(
				`{"op":"manifest","id":`+c.id+`}`,
				`{"id": `+c.id+` ,"op":"nope"}`,
				`{"op":"get","ref":"bad","id":`+c.id+`}`,
			))
			checkReplies(t, tr, []want{ok(id), unknownOp(id, "unknown op"), bad(id, "invalid ref")})
			for i, e := range tr.requestEvents(t) {
				if string(e.ID) != id {
					t.Errorf("event %d: id %s, want %s", i+1, short(string(e.ID)), short(id))
				}
			}
		})
	}
}

// TestResponsesInRequestOrder: replies come in request order whatever
// their outcome.
func TestResponsesInRequestOrder(t *testing.T) {
	f := newFixture(t)
	reqs := []string{
		`{"op":"put","ref":"arca://app/a","value":"1"`,
		`{"op":"nope"`,
		`{"op":"get","ref":"arca://app/a"`,
		`{"op":"get","ref":"arca://app/missing"`,
		`{"op":"list","extra":1`,
		`{"op":"list"`,
		`{"op":"manifest"`,
		`{"op":"rotate","ref":"arca://app/a","value":"2"`,
		`{"op":"rotate","ref":"arca://app/missing","value":"2"`,
		`{"op":"check"`,
		`{"op":"rm","ref":"arca://app/a"`,
		`{"op":"rm","ref":"arca://app/a"`,
		`{"op":"get","ref":"bad"`,
		`{"op":"put","ref":"arca://app/b","value":"3"`,
	}
	var in []string
	var ws []want
	for i, r := range reqs {
		id := strconv.Itoa(i + 1)
		in = append(in, r+`,"id":`+id+`}`)
		ws = append(ws, want{id: id, code: map[int]string{1: "unknown_op", 3: "not_found", 4: "bad_request", 8: "not_found", 11: "not_found", 12: "bad_request"}[i]})
	}
	tr := f.serve(t, lines(in...))
	checkReplies(t, tr, ws)
}

// TestShutdownStops: shutdown replies, the stop event says why, and
// nothing after it runs.
func TestShutdownStops(t *testing.T) {
	f := newFixture(t)
	tr := f.serve(t, lines(`{"op":"shutdown","id":1}`, `{"op":"put","ref":"arca://a/b","value":"v","id":2}`))
	checkReplies(t, tr, []want{ok("1")})
	es := tr.events(t)
	if last := es[len(es)-1]; last.Event != "stop" || last.Message != "shutdown" {
		t.Errorf("last event %+v, want stop for shutdown", last)
	}
	if f.spy.touched() != 0 {
		t.Errorf("a request after shutdown reached the vault: %v", f.spy.calls)
	}
	tr = f.serve(t, lines(`{"op":"list"}`))
	if rs := tr.responses(t); len(rs) != 1 || !strings.Contains(string(rs[0].Result), `"records":[]`) {
		t.Errorf("the put after shutdown was committed: %s", tr.stdout)
	}
}

// TestEOFStops: EOF ends the session cleanly (Serve returns nil) with a stop event.
func TestEOFStops(t *testing.T) {
	f := newFixture(t)
	tr := f.serve(t, "")
	if len(tr.stdout) != 0 || len(tr.stderr) != 2 {
		t.Errorf("empty session wrote stdout %q stderr %q", tr.stdout, tr.stderr)
	}
	if es := tr.events(t); es[1].Message != "eof" {
		t.Errorf("stop message %q, want eof", es[1].Message)
	}
}
