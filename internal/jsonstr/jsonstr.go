// Package jsonstr is arca's one JSON string codec: the writing of a
// string as a JSON literal, and two readings of one.
//
//	Append          writes s as a literal; a valid UTF-8 s decodes back to
//	                exactly its bytes, by either reading below
//	Plain           finds a literal that needs no decoding, copying nothing
//	Decode          reads a literal strictly: invalid UTF-8, a control
//	                character, a bad escape and a lone surrogate escape are
//	                errors (what a request to serve may hold)
//	Scan, Unquote   read a literal as encoding/json does: the same
//	                literals accepted, invalid UTF-8 and lone surrogates
//	                turned into U+FFFD (what a client of serve reads)
//
// Decode accepts exactly what encoding/json accepts into a string, and
// gives the same text, but for the one place it is stricter: a literal
// that is not valid UTF-8, or holds a \u escape of half a surrogate pair
// alone, which encoding/json turns into U+FFFD without a word; the fuzz
// tests hold both readings to encoding/json.
package jsonstr

import (
	"encoding/binary"
	"unicode/utf16"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// Append appends s as a JSON string. Control characters, quotes and
// backslashes are escaped, U+2028 and U+2029 too (they end lines in some
// readers), and invalid UTF-8 becomes U+FFFD. Nothing else is changed, so a
// valid UTF-8 value decodes to exactly its bytes. (encoding/json writes
// \b and \f where Append writes \u0008 and \u000c; the bytes of the audit
// wire, which its hash chain covers, are Append's.)
func Append[S ~string | ~[]byte](b []byte, s S) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		for i+8 <= len(s) && plain8(uint64(s[i])|uint64(s[i+1])<<8|uint64(s[i+2])<<16|uint64(s[i+3])<<24|
			uint64(s[i+4])<<32|uint64(s[i+5])<<40|uint64(s[i+6])<<48|uint64(s[i+7])<<56) {
			i += 8 // eight common bytes at a time
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if plain[c] {
			i++
			continue
		}
		if c < 0x80 {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, n := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		if r == utf8.RuneError && n == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += n
			start = i
			continue
		}
		i += n
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// Decode decodes the JSON string literal at the start of b strictly (see
// the package doc). On success n is the literal's length, its quotes
// included. On failure n is how far into b the literal was read when it
// went wrong: the byte that cannot be there, or within a bad escape; len(b)
// when b ends before the closing quote, outside an escape.
func Decode(b []byte) (s string, n int, ok bool) {
	if len(b) == 0 || b[0] != '"' {
		return "", 0, false
	}
	i := 1
	for i+8 <= len(b) && plain8(binary.LittleEndian.Uint64(b[i:])) {
		i += 8 // eight common bytes at a time
	}
	for i < len(b) && plain[b[i]] {
		i++
	}
	if i < len(b) && b[i] == '"' {
		return string(b[1:i]), i + 1, true
	}
	return decodeSlow(b, i)
}

// Plain reports the body of the JSON string literal at the start of b
// when it is plain: no escape and no byte that is not printable ASCII,
// so that it is its own text (Decode would return a copy of it). n is the
// literal's length, quotes included; 0 when the literal is not plain or
// not whole (body is then nil).
func Plain(b []byte) (body []byte, n int) {
	if len(b) == 0 || b[0] != '"' {
		return nil, 0
	}
	i := 1
	for i+8 <= len(b) && plain8(binary.LittleEndian.Uint64(b[i:])) {
		i += 8
	}
	for i < len(b) && plain[b[i]] {
		i++
	}
	if i < len(b) && b[i] == '"' {
		return b[1:i], i + 1
	}
	return nil, 0
}

// decodeSlow goes on with Decode from b[i], the first byte that is not
// plain, into a copy.
func decodeSlow(b []byte, i int) (string, int, bool) {
	out := append([]byte(nil), b[1:i]...)
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			return string(out), i + 1, true
		case c < 0x20:
			return "", i, false
		case c == '\\':
			var ok bool
			if out, i, ok = escape(out, b, i); !ok {
				return "", i, false
			}
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n <= 1 {
				return "", i, false
			}
			out = append(out, b[i:i+n]...)
			i += n
		}
	}
	return "", i, false
}

// escape decodes the escape at b[i] (a backslash) onto out, and returns
// where it ends; on failure, where it went wrong.
func escape(out, b []byte, i int) ([]byte, int, bool) {
	if i+1 >= len(b) {
		return out, i, false
	}
	c := b[i+1]
	i += 2
	switch c {
	case '"', '\\', '/':
		return append(out, c), i, true
	case 'b':
		return append(out, '\b'), i, true
	case 'f':
		return append(out, '\f'), i, true
	case 'n':
		return append(out, '\n'), i, true
	case 'r':
		return append(out, '\r'), i, true
	case 't':
		return append(out, '\t'), i, true
	case 'u':
		r := hex4(b[i:])
		if r < 0 {
			return out, i, false
		}
		i += 4
		if utf16.IsSurrogate(r) {
			if i+1 >= len(b) || b[i] != '\\' || b[i+1] != 'u' {
				return out, i, false // a lone surrogate has no UTF-8 form
			}
			i += 2
			r2 := hex4(b[i:])
			if r2 < 0 {
				return out, i, false
			}
			i += 4
			if r = utf16.DecodeRune(r, r2); r == utf8.RuneError {
				return out, i, false
			}
		}
		return utf8.AppendRune(out, r), i, true
	}
	return out, i, false
}

// hex4 decodes the four hex digits at the start of b, or returns -1.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return -1
		}
	}
	return r
}

// Scan checks the JSON string literal at the start of b as encoding/json's
// scanner checks one: a quote at each end, no control character between,
// every escape one of \" \\ \/ \b \f \n \r \t \uXXXX. UTF-8 and surrogate
// pairs are not checked (Unquote replaces what is wrong). It returns the
// literal's length, quotes included, or -1; esc reports a backslash in it
// and high a byte over 0x7f: with neither, the text is the body as it is.
func Scan(b []byte) (n int, esc, high bool) {
	if len(b) == 0 || b[0] != '"' {
		return -1, false, false
	}
	for i := 1; i < len(b); {
		for i+8 <= len(b) && plain8(binary.LittleEndian.Uint64(b[i:])) {
			i += 8 // eight common bytes at a time
		}
		for i < len(b) && plain[b[i]] {
			i++
		}
		if i >= len(b) {
			break
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, esc, high
		case c == '\\':
			esc = true
			if i+1 >= len(b) {
				return -1, false, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
				continue
			case 'u':
				if hex4(b[i+2:]) >= 0 {
					i += 6
					continue
				}
			}
		case c >= utf8.RuneSelf:
			high = true
			i++
			continue
		}
		return -1, false, false // a control character, or a bad escape
	}
	return -1, false, false
}

// plain8 reports whether all eight bytes of x are plain: none is a quote
// or a backslash, below 0x20 or above 0x7f. These are the classic SWAR
// tests: (v - 0x01…)&^v has a high bit set if and only if some byte of v
// is zero, (x - 0x20…)&^x if some byte of x is below 0x20.
func plain8(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q, b := x^(ones*'"'), x^(ones*'\\')
	return ((x-ones*0x20)&^x|(q-ones)&^q|(b-ones)&^b|x)&highs == 0
}

// plain marks the bytes a literal holds as they are: not a quote, a
// backslash, a control character or a byte over 0x7f. It is never written
// after it is made.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// Unquote decodes the body of a literal Scan accepted (what is between its
// quotes), as encoding/json does: invalid UTF-8 and a lone surrogate each
// become U+FFFD.
func Unquote(s []byte) []byte {
	b := make([]byte, 0, len(s)+utf8.UTFMax)
	for r := 0; r < len(s); {
		c := s[r]
		switch {
		case c == '\\':
			switch s[r+1] {
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				rr := hex4(s[r+2:])
				r += 6
				if utf16.IsSurrogate(rr) {
					if r+1 < len(s) && s[r] == '\\' && s[r+1] == 'u' {
						if dec := utf16.DecodeRune(rr, hex4(s[r+2:])); dec != utf8.RuneError {
							b = utf8.AppendRune(b, dec)
							r += 6
							continue
						}
					}
					rr = utf8.RuneError
				}
				b = utf8.AppendRune(b, rr)
				continue
			default: // '"', '\\', '/'
				b = append(b, s[r+1])
			}
			r += 2
		case c < utf8.RuneSelf:
			b = append(b, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			r += size
			b = utf8.AppendRune(b, rr) // RuneError for an invalid byte
		}
	}
	return b
}
