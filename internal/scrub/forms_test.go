package scrub

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
)

// TestBase64AtEveryAlignment: a value inside base64(prefix+value+suffix),
// with 0 to 5 bytes before it and 0 to 3 after, in the standard and URL
// alphabets, padded or not, loses exactly the characters it alone
// determines: they become one placeholder, and every other character
// stays.
func TestBase64AtEveryAlignment(t *testing.T) {
	r := rand.New(rand.NewPCG(64, 6))
	encs := map[string]*base64.Encoding{"std": base64.StdEncoding, "url": base64.URLEncoding,
		"raw std": base64.RawStdEncoding, "raw url": base64.RawURLEncoding}
	for _, n := range []int{7, 8, 9, 10, 11, 16, 32, 33, 100} {
		v := randomBytes(r, n)
		s := NewSet()
		if err := s.Add("K", v); err != nil {
			t.Fatal(err)
		}
		for pre := range 6 {
			for suf := range 4 {
				data := append(append(randomBytes(r, pre), v...), randomBytes(r, suf)...)
				for name, enc := range encs {
					text := enc.EncodeToString(data)
					first, end := (8*pre+5)/6, 8*(pre+n)/6
					want := text[:first] + "<redacted:K>" + text[end:]
					if got, _ := s.Scrub([]byte(text)); string(got) != want {
						t.Errorf("%d bytes, %d before, %d after, %s: %q, want %q", n, pre, suf, name, got, want)
					}
				}
			}
		}
	}
}

func randomBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// TestEveryFormIsCaught: a value with characters every encoding escapes,
// printed as programs print it, is one placeholder in each.
func TestEveryFormIsCaught(t *testing.T) {
	v := "p@ss/w<rd>&\"it's\"\t\\ 100%+ok\x01"
	s := NewSet()
	if err := s.Add("db/pass", []byte(v)); err != nil {
		t.Fatal(err)
	}
	jsonDefault, _ := json.Marshal(v)
	var plain bytes.Buffer
	enc := json.NewEncoder(&plain)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	for name, text := range map[string]string{
		"raw":          "pass=" + v + "\n",
		"json":         `{"pass":` + string(jsonDefault) + "}",
		"json no html": `{"pass":` + strings.TrimSpace(plain.String()) + "}",
		"json \\u00XX": `{"pass":"` + strings.ReplaceAll(strings.TrimSpace(plain.String()[1:len(plain.String())-2]), `\t`, `\u0009`) + `"}`,
		"json \\/":     `{"pass":"` + strings.ReplaceAll(strings.TrimSpace(plain.String()[1:len(plain.String())-2]), `/`, `\/`) + `"}`,
		"query":        "https://h/?pass=" + url.QueryEscape(v) + "&x=1",
		"path":         "https://h/" + url.PathEscape(v) + "/x",
		"path with /":  "https://h/" + strings.ReplaceAll(url.PathEscape(v), "%2F", "/") + "/x",
		"quote":        "https://h/" + strings.ReplaceAll(strings.ReplaceAll(url.QueryEscape(v), "+", "%20"), "%2F", "/") + "/x",
		"quote all":    "https://h/?p=" + strings.ReplaceAll(url.QueryEscape(v), "+", "%20") + "&x=1",
		"hex":          "0x" + hex.EncodeToString([]byte(v)) + ".",
		"HEX":          "0x" + strings.ToUpper(hex.EncodeToString([]byte(v))) + ".",
		"shell":        "export PASS='" + strings.ReplaceAll(v, "'", `'\''`) + "'",
		"shlex.quote":  "export PASS='" + strings.ReplaceAll(v, "'", `'"'"'`) + "'",
		"basic auth":   "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("user:"+v)),
	} {
		got, rs := s.Scrub([]byte(text))
		if bytes.Contains(got, []byte("ss/w")) || bytes.Count(got, []byte("<redacted:db/pass>")) != 1 || len(rs) != 1 || rs[0].Count != 1 {
			t.Errorf("%s: %q gave %q %v", name, text, got, rs)
		}
	}
}

// TestJSONPastASCII: a value past ASCII, written as Python's json.dumps
// writes it by default (every such character \uXXXX, a surrogate pair
// past U+FFFF) or as PHP's json_encode does (and / as \/), is caught.
func TestJSONPastASCII(t *testing.T) {
	s := NewSet()
	if err := s.Add("K", []byte("pässwörd/€-😀-x1")); err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{
		`{"p": "p\u00e4ssw\u00f6rd/\u20ac-\ud83d\ude00-x1"}`,
		`{"p":"p\u00e4ssw\u00f6rd\/\u20ac-\ud83d\ude00-x1"}`,
	} {
		if got, rs := s.Scrub([]byte(text)); bytes.Contains(got, []byte("ssw")) || len(rs) != 1 || rs[0].Count != 1 {
			t.Errorf("%s gave %q %v", text, got, rs)
		}
	}
}

// TestFormsOf: each form once, the value first; a value that no
// escaping changes has its bytes, hex in both cases and base64 at three
// alignments (both alphabets alike here).
func TestFormsOf(t *testing.T) {
	want := []string{"abcdefghijkl", "6162636465666768696a6b6c", "6162636465666768696A6B6C",
		"YWJjZGVmZ2hpamts", "FiY2RlZmdoaWprb", "hYmNkZWZnaGlqa2"}
	fs := formsOf([]byte("abcdefghijkl"))
	if len(fs) != len(want) {
		t.Fatalf("forms %q", fs)
	}
	for i := range fs {
		if string(fs[i]) != want[i] {
			t.Errorf("form %d: %q, want %q", i, fs[i], want[i])
		}
	}
}
