package tmpl

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"
)

// hostile is a value through each filter: the bare value is the value.
type hostile struct {
	name, value, base64, json, shell string
}

// hostiles are values meant to break out of what a filter writes. A shell
// of "" means shell refuses the value.
var hostiles = []hostile{
	{"newlines", "line1\nline2\n", "bGluZTEKbGluZTIK", `"line1\nline2\n"`, "'line1\nline2\n'"},
	{"CR", "a\rb\r\n", "YQ1iDQo=", `"a\rb\r\n"`, "'a\rb\r\n'"},
	{"quotes", `it's "quoted"`, "aXQncyAicXVvdGVkIg==", `"it's \"quoted\""`, `'it'\''s "quoted"'`},
	{"backslashes", `back\slash\\ \n`, "YmFja1xzbGFzaFxcIFxu", `"back\\slash\\\\ \\n"`, `'back\slash\\ \n'`},
	{"braces", `{{ arca://x/y }} and }} {{ "{{" }}`, "e3sgYXJjYTovL3gveSB9fSBhbmQgfX0ge3sgInt7IiB9fQ==", `"{{ arca://x/y }} and }} {{ \"{{\" }}"`, `'{{ arca://x/y }} and }} {{ "{{" }}'`},
	{"shell expansions", "$(rm -rf /) `id` $HOME ${X} !! ;&|<>*?~", "JChybSAtcmYgLykgYGlkYCAkSE9NRSAke1h9ICEhIDsmfDw+Kj9+", "\"$(rm -rf /) `id` $HOME ${X} !! ;&|<>*?~\"", "'$(rm -rf /) `id` $HOME ${X} !! ;&|<>*?~'"},
	{"HTML", "<script>&amp;</script>", "PHNjcmlwdD4mYW1wOzwvc2NyaXB0Pg==", `"<script>&amp;</script>"`, "'<script>&amp;</script>'"},
	{"controls", "tab\tbell\x07esc\x1b del\x7f bs\x08 ff\x0c", "dGFiCWJlbGwHZXNjGyBkZWx/IGJzCCBmZgw=", `"tab\tbell\u0007esc\u001b del` + "\x7f" + ` bs\b ff\f"`, "'tab\tbell\x07esc\x1b del\x7f bs\x08 ff\x0c'"},
	{"unicode", "é日本🙂\u2028\u2029", "w6nml6XmnKzwn5mC4oCo4oCp", `"é日本🙂\u2028\u2029"`, "'é日本🙂\u2028\u2029'"},
	{"empty", "", "", `""`, "''"},
	{"only a quote", "'", "Jw==", `"'"`, `''\'''`},
	{"two quotes", "''", "Jyc=", `"''"`, `''\'''\'''`},
	{"backslash quote", `\'`, "XCc=", `"\\'"`, `'\'\'''`},
	{"leading dash", "-n -e", "LW4gLWU=", `"-n -e"`, "'-n -e'"},
	{"NUL", "nul\x00byte", "bnVsAGJ5dGU=", `"nul\u0000byte"`, ""},
}

func TestHostileValues(t *testing.T) {
	src := "bare={{ arca://v/x }}\nb64={{ arca://v/x | base64 }}\njson={{ arca://v/x | json }}\n"
	for _, h := range hostiles {
		t.Run(h.name, func(t *testing.T) {
			m := map[string]string{"arca://v/x": h.value}
			got, err := render(t, src, m)
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			want := "bare=" + h.value + "\nb64=" + h.base64 + "\njson=" + h.json + "\n"
			if got != want {
				t.Errorf("Render\n %q\nwant\n %q", got, want)
			}
			got, err = render(t, "sh={{ arca://v/x | shell }}\n", m)
			switch {
			case h.shell == "" && err == nil:
				t.Errorf("shell wrote %q, want it refused", got)
			case h.shell != "" && err != nil:
				t.Errorf("shell: %v", err)
			case h.shell != "" && got != "sh="+h.shell+"\n":
				t.Errorf("shell %q, want %q", got, "sh="+h.shell+"\n")
			}
		})
	}
}

// roundTripValues are the hostile values and more: every ASCII byte alone,
// long runs of quotes, long values.
func roundTripValues() []string {
	var vs []string
	for _, h := range hostiles {
		vs = append(vs, h.value)
	}
	for b := range 0x80 {
		vs = append(vs, string(rune(b)), "a"+string(rune(b))+"b")
	}
	return append(vs, strings.Repeat("'", 100), strings.Repeat(`'\"`, 50), strings.Repeat("x'y\n", 4096), "\uFEFF\U0010FFFF\u00a0")
}

func TestShellRoundTrip(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	for _, v := range roundTripValues() {
		if strings.IndexByte(v, 0) >= 0 {
			continue
		}
		word, err := render(t, "{{ arca://v/x | shell }}", map[string]string{"arca://v/x": v})
		if err != nil {
			t.Fatalf("Render %q: %v", v, err)
		}
		out, err := exec.Command("/bin/sh", "-c", "printf %s "+word).Output()
		if err != nil {
			t.Fatalf("sh -c 'printf %%s '%q: %v", word, err)
		}
		if string(out) != v {
			t.Errorf("sh gave back %q for %q (word %q)", out, v, word)
		}
	}
}

func TestBase64RoundTrip(t *testing.T) {
	for _, v := range roundTripValues() {
		got, err := render(t, "{{ arca://v/x | base64 }}", map[string]string{"arca://v/x": v})
		if err != nil {
			t.Fatal(err)
		}
		dec, err := base64.StdEncoding.DecodeString(got)
		if err != nil || string(dec) != v {
			t.Errorf("base64 %q decodes to %q, %v; want %q", got, dec, err, v)
		}
	}
}

func TestJSONRoundTrip(t *testing.T) {
	for _, v := range roundTripValues() {
		got, err := render(t, "{{ arca://v/x | json }}", map[string]string{"arca://v/x": v})
		if err != nil {
			t.Fatal(err)
		}
		var dec string
		if err := json.Unmarshal([]byte(got), &dec); err != nil || dec != v {
			t.Errorf("json %q decodes to %q, %v; want %q", got, dec, err, v)
		}
	}
}

// stdJSON is src as encoding/json writes a string without HTML escaping.
func stdJSON(t testing.TB, src []byte) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(string(src)); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// checkJSON holds appendJSON and jsonSize to encoding/json for src.
func checkJSON(t testing.TB, src []byte) {
	got := appendJSON(nil, src)
	if want := stdJSON(t, src); string(got) != want {
		t.Fatalf("appendJSON(%q) = %s, encoding/json writes %s", src, got, want)
	}
	if n := jsonSize(src); n != len(got) {
		t.Fatalf("jsonSize(%q) = %d, output has %d bytes", src, n, len(got))
	}
}

func TestJSONIsEncodingJSON(t *testing.T) {
	for _, v := range roundTripValues() {
		checkJSON(t, []byte(v))
	}
	for b := range 0x100 {
		checkJSON(t, []byte{byte(b)})
		checkJSON(t, []byte{'a', byte(b), 'b'})
	}
	// Not UTF-8, which no value is, but json must not panic on it either.
	for _, s := range []string{"\xff", "a\xc3", "\xc3(", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x80", "é\xe2\x80\xa8\xff\u2029"} {
		checkJSON(t, []byte(s))
	}
}

func TestShellSize(t *testing.T) {
	for _, v := range roundTripValues() {
		n := shellFilter.size([]byte(v))
		if strings.IndexByte(v, 0) >= 0 {
			if n != -1 {
				t.Errorf("size of %q = %d, want -1", v, n)
			}
			continue
		}
		if got := shellFilter.append(nil, []byte(v)); n != len(got) {
			t.Errorf("size of %q = %d, output has %d bytes", v, n, len(got))
		}
	}
}

func FuzzFilters(f *testing.F) {
	for _, v := range roundTripValues() {
		f.Add([]byte(v))
	}
	f.Add([]byte("\xff\xed\xa0\x80"))
	f.Fuzz(func(t *testing.T, v []byte) {
		checkJSON(t, v)
		if utf8.Valid(v) {
			var dec string
			if err := json.Unmarshal(appendJSON(nil, v), &dec); err != nil || dec != string(v) {
				t.Fatalf("json of %q decodes to %q, %v", v, dec, err)
			}
		}
		if n := base64Filter.size(v); n != len(base64Filter.append(nil, v)) {
			t.Fatalf("base64 size %d", n)
		}
		if n := shellFilter.size(v); n >= 0 && n != len(shellFilter.append(nil, v)) {
			t.Fatalf("shell size %d", n)
		}
	})
}

func TestDocExample(t *testing.T) {
	doc, err := os.ReadFile("tmpl.go")
	if err != nil {
		t.Fatal(err)
	}
	const value = `it's <"a\b"> & more`
	if !strings.Contains(string(doc), "// The value "+value+", through each filter:") {
		t.Fatalf("the package doc does not name the value %s", value)
	}
	n := 0
	for line := range strings.Lines(string(doc)) {
		action, want, ok := strings.Cut(strings.TrimPrefix(line, "//\t"), "}}")
		if !ok || !strings.HasPrefix(line, "//\t{{ arca://db/pw") {
			continue
		}
		n++
		got, err := render(t, action+"}}", map[string]string{"arca://db/pw": value})
		if err != nil {
			t.Fatal(err)
		}
		if want = strings.TrimSpace(want); got != want {
			t.Errorf("%s}}: Render %s, the doc says %s", action, got, want)
		}
	}
	if n != 4 {
		t.Fatalf("%d examples in the doc, want 4", n)
	}
}
