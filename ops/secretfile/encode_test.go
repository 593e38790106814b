package secretfile

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/arca-secrets/arca/manifest"
)

// hostile are values that break naive quoting; every one must come back
// byte for byte.
var hostile = []string{
	"plain", "a b", " lead", "trail ", "", "it's", `say "hi"`, `C:\Users\x`, `ends in \`, "$HOME ${X} $(id) `id`",
	"line1\nline2\n", "cr\rlf\r\n", "\ttab", "# not a comment", "a #b", "x=y==", "'single'", `"double"`, "é 日本 🙂",
	"\x00nul\x1bESC\x7f", "\u2028\u2029", "<>&", canary, "k: v", `{"a":1}`, "\\n literal", "$", "\\",
}

func hostileEntries(ns string) []Entry {
	var kvs []kv
	for i, v := range hostile {
		kvs = append(kvs, kv{ns, fmt.Sprintf("K%02d", i), v, ""})
	}
	return entries(kvs...)
}

func TestWriteDotenv(t *testing.T) {
	var b bytes.Buffer
	es := entries(kv{"x", "A", "simple-Value_1.2:3@4%5+6,7=8/9", ""}, kv{"", "B", `it's "q" \ $X`, ""}, kv{"", "C", "l1\nl2\r\t`", ""}, kv{"", "D", "", ""},
		kv{"", "E", "a`touch x`b $(id) \"q\"", ""})
	if err := WriteDotenv(&b, es); err != nil {
		t.Fatal(err)
	}
	want := "A=simple-Value_1.2:3@4%5+6,7=8/9\n" + `B="it's \"q\" \\ \$X"` + "\n" + `C="l1\nl2\r\t` + "\\`\"\n" + `D=''` + "\n" +
		"E='a`touch x`b $(id) \"q\"'\n"
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// A shell that sources what WriteDotenv wrote runs nothing a value holds
// and sets the variables to the values (those without a newline exactly).
func TestWriteDotenvSourced(t *testing.T) {
	var b bytes.Buffer
	es := entries(kv{"", "A", "a`touch PWNED`b", ""}, kv{"", "B", "it's $(touch PWNED) `touch PWNED`", ""}, kv{"", "C", `"$HOME" \`, ""})
	if err := WriteDotenv(&b, es); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out, err := exec.Command("/bin/sh", "-c", `cd "$1" && . "$2" && printf '%s\n%s\n%s' "$A" "$B" "$C"`, "sh", dir, writeTemp(t, b.String())).CombinedOutput()
	if err != nil {
		t.Fatalf("sh: %v: %s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "PWNED")); err == nil {
		t.Fatal("sourcing the dotenv ran a command a value held")
	}
	if want := "a`touch PWNED`b\nit's $(touch PWNED) `touch PWNED`\n\"$HOME\" \\"; string(out) != want {
		t.Fatalf("sourced values %q, want %q", out, want)
	}
}

func writeTemp(t *testing.T, s string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "x.env")
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestWriteJSON(t *testing.T) {
	es := entries(kv{"web", "b", "2", ""}, kv{"app", "z", "<&>\n\"é", ""}, kv{"app", "a", "1", ""})
	for shape, want := range map[Shape]string{
		Flat:   "{\n  \"a\": \"1\",\n  \"b\": \"2\",\n  \"z\": \"<&>\\n\\\"é\"\n}\n",
		Nested: "{\n  \"app\": {\n    \"a\": \"1\",\n    \"z\": \"<&>\\n\\\"é\"\n  },\n  \"web\": {\n    \"b\": \"2\"\n  }\n}\n",
	} {
		var b bytes.Buffer
		if err := WriteJSON(&b, es, shape); err != nil {
			t.Fatal(err)
		}
		if b.String() != want {
			t.Errorf("%v: got\n%s\nwant\n%s", shape, b.String(), want)
		}
	}
	for _, shape := range []Shape{Flat, Nested} {
		var b bytes.Buffer
		if err := WriteJSON(&b, nil, shape); err != nil || b.String() != "{}\n" {
			t.Errorf("%v empty: %q, %v", shape, b.String(), err)
		}
	}
}

func TestWriteRefused(t *testing.T) {
	big := strings.Repeat("x", manifest.MaxValue+1)
	tests := []struct {
		name   string
		es     []Entry
		shape  Shape // for WriteJSON
		dotenv string
		json   string
	}{
		{"bad name", entries(kv{"", "A", "1", ""}, kv{"", "MY KEY", canary, ""}), Flat,
			`entry 2: name "MY KEY" is not a valid name: has a character outside [A-Za-z0-9._-]: ' '`, `entry 2: name "MY KEY" is not a valid name: has a character outside [A-Za-z0-9._-]: ' '`},
		{"duplicate", entries(kv{"a", "A", canary, ""}, kv{"b", "B", "1", ""}, kv{"b", "A", canary, ""}), Flat, "entry 3: A is also entry 1", "entry 3: A is also entry 1"},
		{"duplicate in one namespace", entries(kv{"a", "A", canary, ""}, kv{"a", "A", canary, ""}), Nested, "entry 2: A is also entry 1", "entry 2: a/A is also entry 1"},
		{"bad namespace", entries(kv{"", "A", canary, ""}), Nested, "", `entry 1: namespace "" is not a valid name: is empty`},
		{"not UTF-8", entries(kv{"", "A", canary + "\xff", ""}), Flat, "entry 1 (A): the value is not valid UTF-8", "entry 1 (A): the value is not valid UTF-8"},
		{"too large", entries(kv{"", "A", big, ""}), Flat, "entry 1 (A): the value is larger than 65536 bytes (64 KiB)", "entry 1 (A): the value is larger than 65536 bytes (64 KiB)"},
	}
	for _, tc := range tests {
		var b bytes.Buffer
		err := WriteDotenv(&b, tc.es)
		if tc.dotenv == "" && err != nil || tc.dotenv != "" && (err == nil || err.Error() != tc.dotenv) || tc.dotenv != "" && b.Len() > 0 {
			t.Errorf("%s: WriteDotenv: %v, wrote %d bytes; want %q", tc.name, err, b.Len(), tc.dotenv)
		}
		noCanary(t, err)
		b.Reset()
		err = WriteJSON(&b, tc.es, tc.shape)
		if err == nil || err.Error() != tc.json || b.Len() > 0 {
			t.Errorf("%s: WriteJSON: %v, wrote %d bytes; want %q", tc.name, err, b.Len(), tc.json)
		}
		noCanary(t, err)
	}
}

// roundTrip writes es, parses the output and compares names, namespaces
// and values (Where is the parser's own).
func roundTrip(t *testing.T, format string, es []Entry, shape Shape) {
	t.Helper()
	var b bytes.Buffer
	var err error
	if format == "dotenv" {
		err = WriteDotenv(&b, es)
	} else {
		err = WriteJSON(&b, es, shape)
	}
	if err != nil {
		t.Fatalf("write: %v", err)
	}
	got, gotShape, err := Parse(b.Bytes(), format, Options{})
	if err != nil {
		t.Fatalf("Parse of what was written: %v\n%q", err, b.String())
	}
	want := slices.Clone(es)
	if format == "json" { // keys come back sorted
		slices.SortFunc(want, func(a, b Entry) int { return cmp.Or(cmp.Compare(a.NS, b.NS), cmp.Compare(a.Name, b.Name)) })
	}
	if shape == Flat || format == "dotenv" {
		for i := range want {
			want[i].NS = ""
		}
	}
	if len(got) != len(want) || len(got) > 0 && gotShape != shape {
		t.Fatalf("%d entries %v, want %d %v", len(got), gotShape, len(want), shape)
	}
	for i := range got {
		if got[i].NS != want[i].NS || got[i].Name != want[i].Name || !got[i].Value.Equal(want[i].Value) {
			t.Fatalf("entry %d: %q/%q = %q, want %q/%q = %q", i, got[i].NS, got[i].Name, got[i].Value.Reveal(), want[i].NS, want[i].Name, want[i].Value.Reveal())
		}
	}
}

func TestRoundTrip(t *testing.T) {
	roundTrip(t, "dotenv", hostileEntries(""), Flat)
	roundTrip(t, "json", hostileEntries(""), Flat)
	roundTrip(t, "json", append(hostileEntries("app"), hostileEntries("web")...), Nested)
	roundTrip(t, "dotenv", entries(kv{"", "A", strings.Repeat("\"", manifest.MaxValue), ""}), Flat)
}

func FuzzDotenvRoundTrip(f *testing.F) {
	for _, v := range hostile {
		f.Add(v, "second")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if !utf8.ValidString(a) || !utf8.ValidString(b) || len(a) > manifest.MaxValue || len(b) > manifest.MaxValue {
			return
		}
		es := entries(kv{"", "A", a, ""}, kv{"", "B_2", b, ""})
		roundTrip(t, "dotenv", es, Flat)
		roundTrip(t, "json", es, Flat)
		es[1].NS, es[0].NS = "n2", "n1"
		roundTrip(t, "json", es, Nested)
	})
}

// WriteJSON's output is valid JSON whatever the values (valid UTF-8).
func TestWriteJSONValid(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, hostileEntries(""), Flat); err != nil {
		t.Fatal(err)
	}
	if !json.Valid(b.Bytes()) || !utf8.Valid(b.Bytes()) {
		t.Fatalf("not valid JSON: %q", b.String())
	}
}
