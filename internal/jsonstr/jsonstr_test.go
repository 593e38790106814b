package jsonstr

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestAppendRoundTrips(t *testing.T) {
	for _, s := range []string{"", "plain", "\"\\/", "\x00\x1f\x7f", "\b\f", "日本語", "\u2028\u2029", "a\r\nb", strings.Repeat("é", 100)} {
		b := Append(nil, s)
		var back string
		if err := json.Unmarshal(b, &back); err != nil || back != s {
			t.Errorf("%q: encoded %s decodes to %q (%v)", s, b, back, err)
		}
		if got, n, ok := Decode(b); !ok || n != len(b) || got != s {
			t.Errorf("%q: encoded %s: Decode gives %q, %d, %v", s, b, got, n, ok)
		}
		if bytes.ContainsAny(b, "\n\r\u2028") {
			t.Errorf("%q: encoding %s holds a line break", s, b)
		}
	}
	if got, want := string(Append(nil, "a\xffb")), `"a\ufffdb"`; got != want {
		t.Errorf("invalid UTF-8 written %s, want %s", got, want)
	}
}

func TestDecode(t *testing.T) {
	tests := []struct {
		lit  string
		want string
		n    int // the literal's length, or where it goes wrong
		ok   bool
	}{
		{`""`, "", 2, true},
		{`"abc"tail`, "abc", 5, true},
		{`"a very long plain literal, read eight bytes at a time"`, "a very long plain literal, read eight bytes at a time", 55, true},
		{`"\"\\\/\b\f\n\r\t"`, "\"\\/\b\f\n\r\t", 18, true},
		{`"\u00e9\u00E9é"`, "ééé", 16, true},
		{`"\ud83d\ude00"`, "😀", 14, true},
		{`"\u2028"`, "\u2028", 8, true},
		{``, "", 0, false},
		{`abc`, "", 0, false},
		{`"abc`, "", 4, false},
		{"\"a\x01\"", "", 2, false},
		{"\"a\tb\"", "", 2, false},
		{`"a\x"`, "", 4, false},
		{`"a\`, "", 2, false},
		{`"a\u12"`, "", 4, false},
		{`"a\u12g4"`, "", 4, false},
		{`"a\ud83d"`, "", 8, false},
		{`"a\ud83dx"`, "", 8, false},
		{`"a\ude00\ud83d"`, "", 14, false},
		{`"a\ud83d\u00e9"`, "", 14, false},
		{`"a\ud83d\u0g"`, "", 10, false},
		{"\"a\xffb\"", "", 2, false},
		{"\"a\xed\xa0\x80\"", "", 2, false}, // a surrogate in UTF-8
	}
	for _, tc := range tests {
		s, n, ok := Decode([]byte(tc.lit))
		if s != tc.want || n != tc.n || ok != tc.ok {
			t.Errorf("Decode(%q) = %q, %d, %v; want %q, %d, %v", tc.lit, s, n, ok, tc.want, tc.n, tc.ok)
		}
	}
}

// plain8 agrees with the byte table for every byte at every place, and
// for random words.
func TestPlain8(t *testing.T) {
	check := func(w [8]byte) {
		want := true
		for _, c := range w {
			want = want && plain[c]
		}
		if got := plain8(binary.LittleEndian.Uint64(w[:])); got != want {
			t.Fatalf("plain8(%q) = %v, the table says %v", w, got, want)
		}
	}
	for at := range 8 {
		for c := range 256 {
			for _, fill := range []byte{'a', ' ', '~', '!', '#', '[', ']'} {
				w := [8]byte{fill, fill, fill, fill, fill, fill, fill, fill}
				w[at] = byte(c)
				check(w)
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1_000_000 {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], r.Uint64())
		check(w)
		for i := range w { // mostly plain bytes, a few not
			if r.IntN(4) > 0 {
				w[i] = byte(0x20 + r.IntN(0x60))
			}
		}
		check(w)
	}
	for c := range 256 {
		if want := c >= 0x20 && c < 0x80 && c != '"' && c != '\\'; plain[c] != want {
			t.Fatalf("plain[%#x] = %v", c, plain[c])
		}
	}
}

// fffdSources counts what in a literal encoding/json may rightly decode to
// U+FFFD: the character itself, and a \uFFFD escape.
func fffdSources(lit []byte) int {
	n := bytes.Count(lit, []byte("\uFFFD"))
	for i := 0; i+1 < len(lit); i++ {
		if lit[i] != '\\' {
			continue
		}
		if lit[i+1] == 'u' && i+6 <= len(lit) && strings.EqualFold(string(lit[i+2:i+6]), "fffd") {
			n++
		}
		i++ // past the escaped byte: \\ is one escape
	}
	return n
}

// FuzzDecode holds both readings to encoding/json: Scan and Unquote accept
// exactly the literals json.Unmarshal accepts into a string, and give its
// text; Decode does too, but for the literals that are not valid UTF-8 or
// hold a lone surrogate escape (each a U+FFFD encoding/json made up),
// which it refuses. A literal is the whole input, as json.Unmarshal needs.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{`""`, `"abc"`, `"\u00e9\ud83d\ude00"`, `"\ud800"`, `"\udc00\ud800"`, "\"\xff\"", `"\uFFFD\ufffd"`, `"a\\ufffd"`, `"\x"`, "\"\x00\"", `"abc`, `"a"b`, ` "a"`, `"\u12"`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, lit []byte) {
		var want string
		jerr := json.Unmarshal(lit, &want)
		jsonOK := jerr == nil && len(lit) > 0 && lit[0] == '"' && lit[len(lit)-1] == '"' // a string, no space around it

		n, esc, high := Scan(lit)
		scanOK := n == len(lit)
		if scanOK != jsonOK {
			t.Fatalf("Scan(%q) = %d, json.Unmarshal says %v", lit, n, jerr)
		}
		if n >= 0 && n < len(lit) {
			var tail string // what Scan took is itself a literal
			if json.Unmarshal(lit[:n], &tail) != nil {
				t.Fatalf("Scan(%q) = %d, a prefix that is not a literal", lit, n)
			}
		}
		if !scanOK {
			if s, n, ok := Decode(lit); ok && n == len(lit) {
				t.Fatalf("Decode(%q) = %q: accepted what encoding/json refuses", lit, s)
			}
			return
		}
		body := lit[1 : len(lit)-1]
		if got := string(Unquote(body)); got != want {
			t.Fatalf("Unquote(%q) = %q, encoding/json gives %q", body, got, want)
		}
		if !esc && !high && string(body) != want {
			t.Fatalf("Scan(%q) says plain, encoding/json gives %q", lit, want)
		}

		strict := utf8.Valid(lit) && strings.Count(want, "\uFFFD") == fffdSources(lit)
		s, n, ok := Decode(lit)
		switch {
		case strict && (!ok || n != len(lit) || s != want):
			t.Fatalf("Decode(%q) = %q, %d, %v; encoding/json gives %q", lit, s, n, ok, want)
		case !strict && ok:
			t.Fatalf("Decode(%q) = %q: accepted invalid UTF-8 or a lone surrogate", lit, s)
		}
	})
}

// FuzzAppend: what Append writes is one literal that both readings, and
// encoding/json, read back as the text (invalid UTF-8 as U+FFFD).
func FuzzAppend(f *testing.F) {
	for _, seed := range []string{"", "a\"b\\c", "\x00\x1f\x7f", "\u2028", "\xff", "日本"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		lit := Append(nil, s)
		var w strings.Builder // s, each invalid byte a U+FFFD of its own
		for i := 0; i < len(s); {
			r, n := utf8.DecodeRuneInString(s[i:])
			w.WriteRune(r)
			i += n
		}
		want := w.String()
		var back string
		if err := json.Unmarshal(lit, &back); err != nil || back != want {
			t.Fatalf("Append(%q) = %s: encoding/json reads %q, %v", s, lit, back, err)
		}
		if got, n, ok := Decode(lit); !ok || n != len(lit) || got != want {
			t.Fatalf("Append(%q) = %s: Decode reads %q, %d, %v", s, lit, got, n, ok)
		}
		if bytes.ContainsAny(lit, "\n\r\u2028\u2029") {
			t.Fatalf("Append(%q) = %s holds a line break", s, lit)
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	for _, bc := range []struct{ name, lit string }{
		{"plain", `"arca://app/db-password-of-some-length"`},
		{"escaped", `"line one\nline two \"quoted\" \u00e9"`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			lit := []byte(bc.lit)
			b.ReportAllocs()
			for b.Loop() {
				if _, _, ok := Decode(lit); !ok {
					b.Fatal("refused")
				}
			}
		})
	}
}

func BenchmarkAppend(b *testing.B) {
	for _, bc := range []struct{ name, s string }{
		{"plain", "s3cret-value-of-some-length-0123456789"},
		{"escaped", "line one\nline two \"quoted\" \u00e9"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			buf := make([]byte, 0, 128)
			b.ReportAllocs()
			for b.Loop() {
				buf = Append(buf[:0], bc.s)
			}
		})
	}
}
