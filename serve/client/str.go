package client

import (
	"encoding/binary"
	"unicode/utf16"
	"unicode/utf8"
)

// The fast path's strings: scanned as encoding/json's scanner checks them,
// decoded as its unquote decodes them.

// str scans a string and returns what is between its quotes; esc reports a
// backslash in it, high a byte over 0x7f. Escapes are checked as
// encoding/json's scanner checks them, and so are control characters.
func (d *dec) str() (body []byte, esc, high bool) {
	if d.i >= len(d.b) || d.b[d.i] != '"' { // serve writes no whitespace
		if d.peek() != '"' {
			d.fail()
			return nil, false, false
		}
	}
	b, i := d.b, d.i+1
	start := i
	for i < len(b) {
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
			d.i = i + 1
			return b[start:i], esc, high
		case c == '\\':
			esc = true
			if i+1 >= len(b) {
				break
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
				continue
			case 'u':
				if getu4(b[i:]) >= 0 {
					i += 6
					continue
				}
			}
		case c >= utf8.RuneSelf:
			high = true
			i++
			continue
		}
		break // a control character, or a bad escape
	}
	d.fail()
	return nil, false, false
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

// plain marks the bytes a string holds as they are: not a quote, a
// backslash, a control character or a byte over 0x7f.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// text reads a string value as encoding/json does: invalid UTF-8 and lone
// surrogates become U+FFFD.
func (d *dec) text() string { return d.textOr("") }

// textOr is text, and gives back known itself when the string is the same:
// no allocation.
func (d *dec) textOr(known string) string {
	body, esc, high := d.str()
	switch {
	case d.no:
		return ""
	case !esc && (!high || utf8.Valid(body)):
		if string(body) == known {
			return known
		}
		return string(body)
	}
	return string(unquote(body))
}

// unquote decodes the body of a string the scanner accepted, the way
// encoding/json's unquoteBytes does.
func unquote(s []byte) []byte {
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
				rr := getu4(s[r:])
				r += 6
				if utf16.IsSurrogate(rr) {
					if dec := utf16.DecodeRune(rr, getu4(s[r:])); dec != utf8.RuneError {
						b = utf8.AppendRune(b, dec)
						r += 6
						continue
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

// getu4 decodes the \uXXXX at the start of s, or returns -1.
func getu4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}
