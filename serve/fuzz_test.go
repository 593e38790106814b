package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/arca-secrets/arca/manifest"
)

// FuzzDecode runs the reader and the decoder on arbitrary bytes, and the
// decoder on requests that carry those bytes as their id or inside their
// value. Neither may panic; the reader must split lines exactly as bytes.Split does (with
// a small cap, so its skip path is fuzzed too); and a line is accepted
// (decoded, op known, the op's fields right) exactly when it is a request
// the published schema and the byte caps allow:
//
//   - accepted ⇒ valid JSON, valid against the request schema, nested no deeper
//     than manifest.MaxDepth, and decoded to the same fields encoding/json
//     finds — so a schema-invalid line is always refused and nothing
//     refused can reach ops;
//   - refused for its nesting ⇒ it does nest deeper than MaxDepth;
//   - a line that is valid UTF-8, one JSON object without duplicate keys,
//     valid against the request schema, within every byte cap and nested no
//     deeper than MaxDepth ⇒ accepted.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"op":"get","ref":"arca://app/db","id":1}`,
		`{"op":"put","ref":"arca://prod/app/db","value":"v\u00e9\n","env":"prod","actor":"agent:x","attestation":"a"}`,
		`{"id":{"a" : [1, 2.5e3, "\u00e9"]},"op":"list"}`,
		`{"op":"rotate","ref":"arca://a/b","value":""}` + "\r",
		`{"op":"rm","ref":"arca://a/b"}` + "\n" + `{"op":"shutdown"}`,
		`{"op":"manifest","id":[[[[]]]]}`,
		`{"op":"list","id":` + nested(manifest.MaxDepth-1) + `}`,
		`{"op":"list","id":` + nested(manifest.MaxDepth) + `}`,
		`{"op":"list","x":{"a":` + nested(manifest.MaxDepth) + `}}`,
		`{"op":"list","value":"` + nested(manifest.MaxDepth) + `"}`,
		`{"op":"check","env":""}`,
		`{"op":"list","op":"list"}`,
		`{"Op":"list"}`,
		`{"op":"get","ref":"arca://a/b","value":""}`,
		`{"op":"run"}`,
		`{"op":"list"} x`,
		"{\"op\":\"list\",\"actor\":\"\xff\"}",
		`{"op":"list","actor":"\ud800"}`,
		"\n \t\r\n",
	} {
		f.Add([]byte(s))
	}
	for _, c := range loadJSONTestSuite(f) {
		f.Add(c.data)
	}
	sc := schemas(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		checkReader(t, in, 100)
		for _, line := range bytes.Split(in, []byte("\n")) {
			checkDecode(t, sc, line)
		}
		// The input inside a request that is otherwise right, so the
		// accepting side is fuzzed as hard as the refusing one: as the id
		// (any JSON value), and as the inside of a string.
		checkDecode(t, sc, slices.Concat([]byte(`{"op":"list","id":`), in, []byte(`}`)))
		checkDecode(t, sc, slices.Concat([]byte(`{"op":"put","ref":"arca://a/b","value":"`), in, []byte(`"}`)))
	})
}

// checkReader reads in through a lineReader capped at max and compares
// the lines with bytes.Split.
func checkReader(t *testing.T, in []byte, max int) {
	want := bytes.Split(in, []byte("\n"))
	if len(want[len(want)-1]) == 0 {
		want = want[:len(want)-1] // a final newline ends the last line
	}
	r := newLineReader(bytes.NewReader(in), max)
	for i := 0; ; i++ {
		line, err := r.next()
		if errors.Is(err, io.EOF) {
			if i != len(want) {
				t.Fatalf("reader stopped after %d lines, want %d", i, len(want))
			}
			return
		}
		if i >= len(want) {
			t.Fatalf("reader returned line %d, want %d lines", i+1, len(want))
		}
		switch {
		case len(want[i]) > max:
			if !errors.Is(err, errTooLong) {
				t.Fatalf("line %d of %d bytes: reader returned %q, %v; want too long", i+1, len(want[i]), line, err)
			}
		case err != nil || !bytes.Equal(line, want[i]):
			t.Fatalf("line %d: reader returned %q, %v; want %q", i+1, line, err, want[i])
		}
	}
}

func checkDecode(t *testing.T, sc *schemaSet, line []byte) {
	req, problem := decodeRequest(line, nil)
	var names interner
	for range 2 { // the texts are new, then held
		if r, p := decodeRequest(line, &names); p != problem || !reflect.DeepEqual(r, req) {
			t.Fatalf("decoded through an interner: %+v, %q; without: %+v, %q", r, p, req, problem)
		}
	}
	if req.ID != nil && strictJSON(req.ID) != nil {
		t.Fatalf("decoder kept an id that is not I-JSON (%v): %q", strictJSON(req.ID), req.ID)
	}
	if len(req.ID) > manifest.MaxID {
		t.Fatalf("decoder kept an id of %d bytes", len(req.ID))
	}
	op, known := manifest.Op(req.Op)
	accepted := problem == "" && known && req.FieldsError(op) == nil
	if problem == "" && !json.Valid(line) {
		t.Fatalf("decoder accepts a line encoding/json refuses: %q", line)
	}
	if problem == "" && depthOf(line) > manifest.MaxDepth {
		t.Fatalf("decoder accepts a line nested %d deep: %q", depthOf(line), line)
	}
	if problem == tooDeep && json.Valid(line) && depthOf(line) <= manifest.MaxDepth {
		t.Fatalf("decoder calls a line of depth %d too deep: %q", depthOf(line), line)
	}
	if !accepted {
		if why := plainlyValid(sc, line); why == "" {
			t.Fatalf("a valid request is refused (%q; op known %v): %q", problem, known, line)
		}
		return
	}
	v, err := parseInstance(line)
	if err != nil {
		t.Fatalf("accepted line does not parse with encoding/json: %v: %q", err, line)
	}
	if err := sc.request.Validate(v); err != nil {
		t.Fatalf("accepted line does not validate against the request schema: %v\n%q", err, line)
	}
	m := v.(map[string]any)
	str := func(k string) string { s, _ := m[k].(string); return s }
	if req.Op != str("op") || req.Ref != str("ref") || req.Env != str("env") || string(req.Value.Reveal()) != str("value") ||
		req.Actor != str("actor") || req.Attestation != str("attestation") {
		t.Fatalf("decoder and encoding/json read different fields from %q", line)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(line, &top); err != nil {
		t.Fatal(err)
	}
	if id, ok := top["id"]; ok != (req.ID != nil) || ok && !bytes.Equal(id, req.ID) {
		t.Fatalf("decoder kept id %q, encoding/json finds %q", req.ID, id)
	}
}

// surrogateEscape matches a \u escape of a UTF-16 surrogate. The decoder
// refuses a lone one where encoding/json substitutes U+FFFD; lines holding
// any are left out of the "must accept" direction.
var surrogateEscape = regexp.MustCompile(`\\u[dD][89a-fA-F]`)

// plainlyValid returns "" when line is a request the decoder must accept,
// else why it need not.
func plainlyValid(sc *schemaSet, line []byte) string {
	switch {
	case !utf8.Valid(line):
		return "not UTF-8"
	case surrogateEscape.Match(line):
		return "surrogate escape"
	case !json.Valid(line):
		return "not JSON"
	case depthOf(line) > manifest.MaxDepth:
		return "nests too deep"
	}
	v, err := parseInstance(line)
	if err != nil {
		return "not one value"
	}
	if sc.request.Validate(v) != nil {
		return "schema-invalid"
	}
	if m, _ := v.(map[string]any); m["ref"] == "" {
		return "an empty ref (ops refuses it; the schema does not)"
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	if _, err := dec.Token(); err != nil {
		return "no object"
	}
	seen := map[string]bool{}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return "bad key"
		}
		key := k.(string)
		if seen[key] {
			return "duplicate key"
		}
		seen[key] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return "bad value"
		}
		if key == "id" {
			if len(raw) > manifest.MaxID {
				return "id over its cap"
			}
			continue
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "not a string"
		}
		if caps := map[string]int{"op": manifest.MaxOp, "ref": manifest.MaxRef, "env": manifest.MaxSegment, "value": manifest.MaxValue,
			"actor": manifest.MaxActor, "attestation": manifest.MaxAttestation}; len(s) > caps[key] {
			return key + " over its cap"
		}
	}
	if strictJSON(line) != nil {
		return "a name repeated in an object inside the id"
	}
	return ""
}

// depthOf is how many arrays and objects are open at once at the deepest
// point of the valid JSON text b, as encoding/json reads it.
func depthOf(b []byte) int {
	dec := json.NewDecoder(bytes.NewReader(b))
	depth, deepest := 0, 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return deepest // EOF, or encoding/json's own, far larger, limit
		}
		switch tok {
		case json.Delim('['), json.Delim('{'):
			depth++
			deepest = max(deepest, depth)
		case json.Delim(']'), json.Delim('}'):
			depth--
		}
	}
}

// TestPlainlyValid keeps the fuzz oracle honest on a few lines.
func TestPlainlyValid(t *testing.T) {
	sc := schemas(t)
	for line, want := range map[string]string{
		`{"op":"list"}`:                                            "",
		`{"op":"get","ref":"x","id":[1,2]}`:                        "",
		`{"op":"list","op":"list"}`:                                "duplicate key",
		`{"op":"list","id":[{"a":1,"a":2}]}`:                       "a name repeated in an object inside the id",
		`{"op":"list","id":[{"a":1},{"a":2}]}`:                     "",
		`{"op":"list","actor":"` + strings.Repeat("é", 129) + `"}`: "actor over its cap",
		`{"op":"list","actor":"\ud800"}`:                           "surrogate escape",
		`{"op":"get"}`:                                             "schema-invalid",
		`{"op":"list"} x`:                                          "not JSON",
		`{"op":"list","id":` + nested(manifest.MaxDepth-1) + `}`:   "",
		`{"op":"list","id":` + nested(manifest.MaxDepth) + `}`:     "nests too deep",
	} {
		if got := plainlyValid(sc, []byte(line)); got != want {
			t.Errorf("plainlyValid(%s) = %q, want %q", line, got, want)
		}
		checkDecode(t, sc, []byte(line))
	}
}
