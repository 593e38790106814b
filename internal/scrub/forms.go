package scrub

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"html"
	"net/url"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// formsOf returns the forms of v, each once, v itself first: the texts a
// program that prints v, or prints it encoded, writes. None is shorter
// than MinLen (none can be: the shortest is a base64 fragment of a value
// of MinLen bytes, which is MinLen characters).
func formsOf(v []byte) [][]byte {
	fs := [][]byte{v}
	fs = appendLines(fs, v)
	fs = appendJSON(fs, v)
	path := url.PathEscape(string(v))
	strict := percentEscape(v)
	fs = append(fs, []byte(url.QueryEscape(string(v))), []byte(path), []byte(strings.ReplaceAll(path, "%2F", "/")),
		strict, bytes.ReplaceAll(strict, []byte("%2F"), []byte("/")))
	h := hex.EncodeToString(v)
	fs = append(fs, []byte(h), bytes.ToUpper([]byte(h)))
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for k := range 3 {
			fs = append(fs, base64Fragment(enc, v, k))
		}
	}
	fs = append(fs, bytes.ReplaceAll(v, []byte("'"), []byte(`'\''`)), bytes.ReplaceAll(v, []byte("'"), []byte(`'"'"'`)))
	fs = append(fs, htmlEscapes(v)...)
	return dedupe(fs)
}

// htmlEscapes are v escaped for HTML: as Go's html.EscapeString does it
// (net/http's redirect and error pages, html/template), and as Python's
// html.escape does (&quot; and &#x27; where Go writes &#34; and &#39;).
func htmlEscapes(v []byte) [][]byte {
	py := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#x27;")
	return [][]byte{[]byte(html.EscapeString(string(v))), []byte(py.Replace(string(v)))}
}

// percentEscape is v with every byte but A-Z a-z 0-9 - . _ ~ written %XX
// (RFC 3986's unreserved set; a space is %20): Python's urllib.parse.quote
// with safe="" (and with its default safe="/", once "%2F" is put back).
func percentEscape(v []byte) []byte {
	const upper = "0123456789ABCDEF"
	out := make([]byte, 0, 3*len(v))
	for _, c := range v {
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			out = append(out, c)
			continue
		}
		out = append(out, '%', upper[c>>4], upper[c&15])
	}
	return out
}

// appendLines appends each line of a multi-line v of MinLineLen bytes or
// more, without its line ending ("\n" or "\r\n"): what a program that
// prints v line by line, or with other line endings, or indented, writes.
func appendLines(fs [][]byte, v []byte) [][]byte {
	if bytes.IndexByte(v, '\n') < 0 {
		return fs
	}
	for line := range bytes.SplitSeq(v, []byte("\n")) {
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) >= MinLineLen {
			fs = append(fs, line)
		}
	}
	return fs
}

// appendJSON appends v as the inside of a JSON string, as encoders write
// it: encoding/json's default (which escapes <, > and & as \u003c, \u003e,
// \u0026 for HTML), encoding/json without the HTML escapes (and most other
// encoders: JavaScript's, Python's with ensure_ascii off), every control
// character as \u00XX (\n, \r, \t and the rest; some encoders do not use
// the short escapes), / as \/ (PHP's json_encode), and every character
// past ASCII as \uXXXX (Python's json.dumps; PHP's), with / as it is or \/.
func appendJSON(fs [][]byte, v []byte) [][]byte {
	def, _ := json.Marshal(string(v)) // a string always marshals
	fs = append(fs, def[1:len(def)-1])
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(string(v))
	plain := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	plain = plain[1 : len(plain)-1]
	ascii := jsonASCII(plain)
	fs = append(fs, plain, bytes.ReplaceAll(plain, []byte("/"), []byte(`\/`)),
		ascii, bytes.ReplaceAll(ascii, []byte("/"), []byte(`\/`)))
	return append(fs, jsonControls(v))
}

// jsonASCII is the inside of a JSON string with every character past
// ASCII written \uXXXX, lower case, one past U+FFFF as its surrogate pair:
// Python's json.dumps by default (ensure_ascii) and PHP's json_encode.
func jsonASCII(s []byte) []byte {
	const digits = "0123456789abcdef"
	b := make([]byte, 0, 2*len(s))
	u := func(r rune) {
		b = append(b, '\\', 'u', digits[r>>12&15], digits[r>>8&15], digits[r>>4&15], digits[r&15])
	}
	for len(s) > 0 {
		r, n := utf8.DecodeRune(s)
		switch {
		case r < utf8.RuneSelf:
			b = append(b, s[0])
		case r > 0xFFFF:
			r1, r2 := utf16.EncodeRune(r)
			u(r1)
			u(r2)
		default:
			u(r)
		}
		s = s[n:]
	}
	return b
}

// jsonControls is v inside a JSON string with " and \ escaped and every
// byte under 0x20 written \u00XX, lower case, and nothing else changed.
func jsonControls(v []byte) []byte {
	const digits = "0123456789abcdef"
	b := make([]byte, 0, len(v))
	for _, c := range v {
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', digits[c>>4], digits[c&15])
		default:
			b = append(b, c)
		}
	}
	return b
}

// base64Fragment is the part of the encoding of v that v alone determines
// when v starts k bytes (mod 3) into a longer encoded text: the encoding
// of k filler bytes and v, without the characters that hold bits of the
// filler or of whatever follows v. A character holds 6 bits, so the first
// kept is the one that starts at or after bit 8k, the last the one that
// ends at or before bit 8(k+len(v)).
func base64Fragment(enc *base64.Encoding, v []byte, k int) []byte {
	in := make([]byte, k+len(v))
	copy(in[k:], v)
	s := enc.EncodeToString(in)
	first, end := (8*k+5)/6, 8*(k+len(v))/6
	return []byte(s[first:end])
}

// dedupe keeps the first of forms that are equal, in order.
func dedupe(fs [][]byte) [][]byte {
	out := fs[:0]
	for _, f := range fs {
		seen := false
		for _, g := range out {
			if bytes.Equal(f, g) {
				seen = true
				break
			}
		}
		if !seen {
			out = append(out, f)
		}
	}
	return out
}
