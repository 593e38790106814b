package secretfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops/ref"
	"github.com/arca-secrets/arca/vault"
)

// canary is a value that must never appear in an error. Its non-ASCII tail
// cannot appear in a quoted name (names are quoted in ASCII), so a fuzz
// input that moves it into a name does not trip the check.
const canary = "CANARY-7f3a-é-日本"

// kv is an entry as a test writes it: ns/name=value @where.
type kv struct{ ns, name, value, where string }

func (e kv) String() string { return fmt.Sprintf("%s/%s=%q @%s", e.ns, e.name, e.value, e.where) }

func plain(es []Entry) []kv {
	out := make([]kv, len(es))
	for i, e := range es {
		out[i] = kv{e.NS, e.Name, string(e.Value.Reveal()), e.Where}
	}
	return out
}

func entries(kvs ...kv) []Entry {
	out := make([]Entry, len(kvs))
	for i, e := range kvs {
		out[i] = Entry{NS: e.ns, Name: e.name, Value: vault.NewSecret([]byte(e.value)), Where: e.where}
	}
	return out
}

// parseOK parses in as format and compares the entries and the shape.
func parseOK(t *testing.T, format, in string, shape Shape, want ...kv) {
	t.Helper()
	es, s, err := Parse([]byte(in), format, Options{})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if got := plain(es); !slices.Equal(got, want) || s != shape {
		t.Fatalf("got %v %v\nwant %v %v", s, got, shape, want)
	}
	each, s, err := parseEach([]byte(in), format, Options{})
	if got := plain(each); err != nil || !slices.Equal(got, want) || s != shape {
		t.Fatalf("ParseEach: got %v %v, %v\nwant %v %v", s, got, err, shape, want)
	}
}

// parseEach is ParseEach gathering what it hands over, each value copied
// as its contract asks; the copies are checked after the parse, so a value
// that changed under the caller once handed over would show.
func parseEach(data []byte, format string, o Options) ([]Entry, Shape, error) {
	var es []Entry
	s, err := ParseEach(data, format, o, func(e Entry) error {
		e.Value = vault.NewSecret(bytes.Clone(e.Value.Reveal()))
		es = append(es, e)
		return nil
	})
	return es, s, err
}

// parseErr parses in as format and wants exactly the error msg, which must
// not hold the canary.
func parseErr(t *testing.T, format, in, msg string, o Options) {
	t.Helper()
	es, _, err := Parse([]byte(in), format, o)
	if err == nil {
		t.Fatalf("Parse = %v, want error %q", plain(es), msg)
	}
	if err.Error() != msg {
		t.Fatalf("error %q\nwant  %q", err, msg)
	}
	noCanary(t, err)
	if _, _, err := parseEach([]byte(in), format, o); err == nil || err.Error() != msg {
		t.Fatalf("ParseEach: error %v\nwant  %q", err, msg)
	}
}

func noCanary(t *testing.T, err error) {
	t.Helper()
	if err != nil && (strings.Contains(err.Error(), "7f3a") || strings.Contains(err.Error(), "CANARY")) {
		t.Fatalf("error holds the canary: %q", err)
	}
}

func TestFormats(t *testing.T) {
	if got := Formats(); !slices.Equal(got, []string{"dotenv", "json", "yaml", "vault-kv", "arenzana", "sops-dotenv"}) {
		t.Fatalf("Formats() = %v", got)
	}
	parseErr(t, "toml", "A=1", `unknown format "toml" (one of: dotenv, json, yaml, vault-kv, arenzana, sops-dotenv)`, Options{})
	if Flat.String() != "flat" || Nested.String() != "nested" {
		t.Fatal("Shape.String")
	}
}

// countingReader yields 'a' bytes without end, counting them.
type countingReader struct{ n int64 }

var as = bytes.Repeat([]byte("a"), 32<<10)

func (r *countingReader) Read(p []byte) (int, error) {
	n := copy(p, as)
	r.n += int64(n)
	return n, nil
}

func TestReadBound(t *testing.T) {
	r := &countingReader{}
	_, _, err := Read(r, "dotenv", Options{})
	if err == nil || err.Error() != "the input is larger than 67108864 bytes (64 MiB)" {
		t.Fatalf("Read: %v", err)
	}
	if r.n != MaxInput+1 {
		t.Fatalf("read %d bytes, want MaxInput+1", r.n)
	}
	_, _, err = Parse(make([]byte, MaxInput+1), "json", Options{})
	if err == nil || err.Error() != "the input is larger than 67108864 bytes (64 MiB)" {
		t.Fatalf("Parse: %v", err)
	}
	es, _, err := Read(strings.NewReader("A=1\n"), "dotenv", Options{})
	if err != nil || len(es) != 1 {
		t.Fatalf("Read: %v, %v", plain(es), err)
	}
	_, _, err = Read(io.MultiReader(strings.NewReader("A=1"), errReader{}), "dotenv", Options{})
	if err == nil || err.Error() != "reading the input: disk on fire" {
		t.Fatalf("Read: %v", err)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

// YAML has a bound of its own: MaxYAMLInput bytes parse, one more does not.
func TestYAMLBound(t *testing.T) {
	in := append([]byte("A: 1\n#"), bytes.Repeat([]byte("x"), MaxYAMLInput-6)...)
	if es, _, err := Parse(in, "yaml", Options{}); err != nil || len(es) != 1 {
		t.Fatalf("YAML of exactly MaxYAMLInput bytes: %d entries, %v", len(es), err)
	}
	_, _, err := Parse(append(in, 'x'), "yaml", Options{})
	if err == nil || !strings.HasPrefix(err.Error(), "the input is larger than 8388608 bytes (8 MiB), the most YAML arca parses") {
		t.Fatalf("YAML over MaxYAMLInput: %v", err)
	}
}

// An input of exactly MaxInput bytes is read (and here refused for what it
// holds, not its size).
func TestReadAtBound(t *testing.T) {
	in := append([]byte("A=1\n#"), bytes.Repeat([]byte("x"), MaxInput-5)...)
	es, _, err := Read(bytes.NewReader(in), "dotenv", Options{})
	if err != nil || len(es) != 1 {
		t.Fatalf("Read: %d entries, %v", len(es), err)
	}
}

// A UTF-8 byte order mark is dropped in every format.
func TestBOM(t *testing.T) {
	for format, in := range map[string]string{"dotenv": "A=1\n", "json": `{"A":"1"}`, "yaml": "A: 1\n", "vault-kv": `{"data":{"A":"1"}}`} {
		es, _, err := Parse([]byte("\xef\xbb\xbf"+in), format, Options{})
		if err != nil || len(es) != 1 || es[0].Name != "A" {
			t.Errorf("%s: %v, %v", format, plain(es), err)
		}
	}
}

// Each format refuses a value over MaxValue, one that is not UTF-8 and more
// than MaxEntries entries, in the words the collector gives.
func TestSharedBounds(t *testing.T) {
	big := strings.Repeat("x", manifest.MaxValue)
	tests := []struct{ format, in, msg string }{
		{"dotenv", "A=" + big + "\n", ""},
		{"dotenv", "A=" + big + "y\n", "line 1: A: the value is larger than 65536 bytes (64 KiB)"},
		{"dotenv", "\n\nA=" + canary + "\xff\n", "line 3: A: the value is not valid UTF-8"},
		{"json", `{"A":"` + big + `"}`, ""},
		{"json", `{"A":"` + big + `y"}`, `line 1: key "A": the value is larger than 65536 bytes (64 KiB)`},
		{"json", "{\n\"A\":\"" + canary + "\xff\"}", "line 2: not valid UTF-8"},
		{"json", `{"A":"` + canary + `\udc00"}`, `line 1: key "A": the value is not valid UTF-8 (a lone surrogate escape)`},
		{"yaml", "A: " + big + "\n", ""},
		{"yaml", "n:\n  A: " + big + "y\n", `line 2: key "n"."A": the value is larger than 65536 bytes (64 KiB)`},
		{"yaml", "A: 1\nB: " + canary + "\xff\n", "line 2: not valid UTF-8"},
		{"vault-kv", `{"data":{"data":{"A":"` + big + `y"},"metadata":{}}}`, `line 1: key "data"."data"."A": the value is larger than 65536 bytes (64 KiB)`},
	}
	for _, tc := range tests {
		_, _, err := Parse([]byte(tc.in), tc.format, Options{})
		if tc.msg == "" && err != nil || tc.msg != "" && (err == nil || err.Error() != tc.msg) {
			t.Errorf("%s %.40q: %v, want %q", tc.format, tc.in, err, tc.msg)
		}
		noCanary(t, err)
	}
}

// manyEntries writes n entries K0…K(n-1) in format, one a line.
func manyEntries(format string, n int) []byte {
	var b bytes.Buffer
	ends := map[string][3]string{ // opening, closing, separator
		"json":     {"{", "}", ","},
		"vault-kv": {`{"data":{"data":{`, `},"metadata":{}}}`, ","},
	}[format]
	open, end, sep := ends[0], ends[1], ends[2]
	b.WriteString(open)
	for i := range n {
		if i > 0 {
			b.WriteString(sep)
		}
		switch format {
		case "dotenv":
			fmt.Fprintf(&b, "K%d=v\n", i)
		case "yaml":
			fmt.Fprintf(&b, "K%d: v\n", i)
		default:
			fmt.Fprintf(&b, "\n\"K%d\":\"v\"", i)
		}
	}
	b.WriteString(end)
	return b.Bytes()
}

func TestMaxEntries(t *testing.T) {
	last := fmt.Sprintf("K%d", MaxEntries)
	for format, msg := range map[string]string{
		"dotenv":   "line 100001: " + last + ": more than 100000 entries",
		"json":     `line 100002: key "` + last + `": more than 100000 entries`,
		"yaml":     `line 100001: key "` + last + `": more than 100000 entries`,
		"vault-kv": `line 100002: key "data"."data"."` + last + `": more than 100000 entries`,
	} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			_, _, err := Parse(manyEntries(format, MaxEntries+1), format, Options{})
			if err == nil || err.Error() != msg {
				t.Errorf("%v, want %q", err, msg)
			}
			if format == "yaml" {
				return // the slowest; its count is the collector's, as for the others
			}
			es, _, err := Parse(manyEntries(format, MaxEntries), format, Options{})
			if err != nil || len(es) != MaxEntries {
				t.Errorf("%d entries, %v", len(es), err)
			}
		})
	}
}

// checkResult asserts what every successful Parse promises.
func checkResult(t *testing.T, es []Entry, shape Shape) {
	t.Helper()
	if len(es) > MaxEntries {
		t.Fatalf("%d entries", len(es))
	}
	seen := map[[2]string]bool{}
	for _, e := range es {
		if !ref.ValidSegment(e.Name) || (shape == Flat) != (e.NS == "") || e.NS != "" && !ref.ValidSegment(e.NS) {
			t.Fatalf("bad entry %q/%q in a %v result", e.NS, e.Name, shape)
		}
		if v := e.Value.Reveal(); len(v) > manifest.MaxValue || !utf8.Valid(v) {
			t.Fatalf("entry %q: a value of %d bytes, or not UTF-8", e.Name, len(v))
		}
		k := [2]string{e.NS, e.Name}
		if seen[k] {
			t.Fatalf("entry %q/%q twice", e.NS, e.Name)
		}
		seen[k] = true
		if e.Where == "" {
			t.Fatalf("entry %q has no Where", e.Name)
		}
	}
}

// An error of ParseEach's fn stops the parse there and is what it returns.
func TestParseEachStops(t *testing.T) {
	stop := errors.New("stop here")
	calls := 0
	_, err := ParseEach([]byte("A=1\nB=2\nC=3\n"), "dotenv", Options{}, func(e Entry) error {
		if calls++; e.Name == "B" {
			return stop
		}
		return nil
	})
	if err != stop || calls != 2 {
		t.Fatalf("ParseEach: %v after %d calls, want the fn's error after 2", err, calls)
	}
}
