package termsafe

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// The attacks a server's text can carry, each shown as text.
func TestEscape(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "etcd 3.5.17 answers", "etcd 3.5.17 answers"},
		{"not ASCII", "café — ü ✓ \ufffd", "café — ü ✓ \ufffd"},
		{"retitle (OSC, BEL)", "3.5\x1b]0;pwned\x07", `3.5\x1b]0;pwned\a`},
		{"erase the line above (CSI)", "\x1b[1A\x1b[2K", `\x1b[1A\x1b[2K`},
		{"clipboard (OSC 52, ST)", "\x1b]52;c;aGk=\x1b\\", `\x1b]52;c;aGk=\x1b\`},
		{"a line of its own", "a\nb\rc\td", `a\nb\rc\td`},
		{"DEL", "a\x7fb", `a\u007fb`},
		{"C1 CSI as a rune", "a\u009b2Jb", `a\u009b2Jb`},
		{"C1 NEL", "a\u0085b", `a\u0085b`},
		{"C1 as a byte, not UTF-8", "a\x9b2J", `a\x9b2J`},
		{"a cut rune", "a\xc3", `a\xc3`},
		{"bidirectional override", "abc\u202edcba", `abc\u202edcba`},
		{"line separator", "a\u2028b", `a\u2028b`},
		{"tag character", "a\U000e0041", `a\U000e0041`},
		{"quotes stay", `say "hi" \o/`, `say "hi" \o/`},
	} {
		if got := Escape(tc.in); got != tc.want {
			t.Errorf("%s: Escape(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
}

// Quote leaves printable text alone and otherwise gives a Go string
// literal that reads back to the same text.
func TestQuote(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"app/db", "app/db"},
		{`say "hi"`, `say "hi"`},
		{"a\x1b]0;x\x07", `"a\x1b]0;x\a"`},
		{"\"q\"\n\\", `"\"q\"\n\\"`},
		{"del\x7f c1\u0085", `"del\u007f c1\u0085"`},
	} {
		got := Quote(tc.in)
		if got != tc.want {
			t.Errorf("Quote(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if back, err := strconv.Unquote(got); got != tc.in && (err != nil || back != tc.in) {
			t.Errorf("Quote(%q) = %q reads back as %q (%v)", tc.in, got, back, err)
		}
	}
	if got := Quote("a\xffb"); got != `"a\xffb"` {
		t.Errorf("Quote of a byte that is not UTF-8 = %q", got)
	}
}

// A Writer passes lines and tabs, and escapes every other control
// character; JSON passing through it reads back the same.
func TestWriter(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	in := "ok\tline\n\x1b]0;pwned\x07 \x7f\u0085\xff\r\n"
	if n, err := w.Write([]byte(in)); n != len(in) || err != nil {
		t.Fatalf("Write: %d, %v", n, err)
	}
	if want := "ok\tline\n" + `\x1b]0;pwned\a \u007f\u0085\xff\r` + "\n"; b.String() != want {
		t.Errorf("wrote %q, want %q", b.String(), want)
	}

	v := map[string]string{"version": "3.5\x7f\u0085\u009b2J", "é": "ü\u2028"}
	j, err := json.MarshalIndent(v, "", "\t")
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	w.Write(j)
	if strings.ContainsAny(b.String(), "\x7f\u0085\u009b") {
		t.Fatalf("a control character passed: %q", b.String())
	}
	var back map[string]string
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || back["version"] != v["version"] || back["é"] != v["é"] {
		t.Errorf("JSON through a Writer reads back %q (%v), want %q", back, err, v)
	}
}

func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "a", "\x1b]0;x\x07", "\u0085", "\xff\xfe", "\u202e", "\"\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, got := range []string{Escape(s), Quote(s)} {
			for _, r := range got {
				if !Printable(r) {
					t.Fatalf("%q shows %q, which holds %U", s, got, r)
				}
			}
		}
		if q := Quote(s); q != s {
			if back, err := strconv.Unquote(q); err != nil || back != s {
				t.Fatalf("Quote(%q) = %q reads back %q, %v", s, q, back, err)
			}
		}
		var b bytes.Buffer
		NewWriter(&b).Write([]byte(s))
		for _, r := range b.String() {
			if control(r) && r != '\n' && r != '\t' {
				t.Fatalf("%q passed a Writer as %q, which holds %U", s, b.String(), r)
			}
		}
	})
}

// A rune cut in two by the writes, as a bufio.Writer cuts a long report,
// is written whole; a control character so cut is still escaped.
func TestWriterJoinsCutRunes(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	in := "café ü€𝄞 \u0085 \x1b"
	for i := range len(in) {
		b.Reset()
		w.Write([]byte(in[:i]))
		w.Write([]byte(in[i:] + "\n"))
		if want := `café ü€𝄞 \u0085 \x1b` + "\n"; b.String() != want {
			t.Errorf("cut at %d: wrote %q, want %q", i, b.String(), want)
		}
	}
	b.Reset()
	w.Write([]byte("\xc3"))
	w.Write([]byte("A\xff\n"))
	if want := `\xc3A\xff` + "\n"; b.String() != want {
		t.Errorf("a cut that no write completes: wrote %q, want %q", b.String(), want)
	}
}
