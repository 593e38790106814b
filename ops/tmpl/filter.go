package tmpl

import (
	"bytes"
	"encoding/base64"
	"unicode/utf8"
)

// filter is one of the functions a ref's value goes through: base64, json
// or shell. Each knows its output's exact length before writing it, so
// Render can refuse an output over MaxOutput before building it.
type filter uint8

const (
	base64Filter filter = iota + 1
	jsonFilter
	shellFilter
)

// lookup returns the filter called name.
func lookup(name string) (filter, bool) {
	switch name {
	case "base64":
		return base64Filter, true
	case "json":
		return jsonFilter, true
	case "shell":
		return shellFilter, true
	}
	return 0, false
}

// size is the length of f's output for src, or -1 when f cannot encode
// src (shell, for a src holding a NUL).
func (f filter) size(src []byte) int {
	switch f {
	case base64Filter:
		return base64.StdEncoding.EncodedLen(len(src))
	case jsonFilter:
		return jsonSize(src)
	default:
		if bytes.IndexByte(src, 0) >= 0 {
			return -1
		}
		return len(src) + 2 + 3*bytes.Count(src, []byte("'"))
	}
}

// append appends f's output for src to dst; size(src) must not be -1.
func (f filter) append(dst, src []byte) []byte {
	switch f {
	case base64Filter:
		return base64.StdEncoding.AppendEncode(dst, src)
	case jsonFilter:
		return appendJSON(dst, src)
	default:
		return appendShell(dst, src)
	}
}

// appendShell appends src in single quotes, each ' in it written as four
// bytes: a quote that closes the quoted text, a backslash and a quote for
// the quote itself, and a quote that reopens.
func appendShell(dst, src []byte) []byte {
	dst = append(dst, '\'')
	for {
		i := bytes.IndexByte(src, '\'')
		if i < 0 {
			break
		}
		dst = append(dst, src[:i]...)
		dst = append(dst, `'\''`...)
		src = src[i+1:]
	}
	dst = append(dst, src...)
	return append(dst, '\'')
}

// jsonEscape is how appendJSON writes the ASCII byte b: 0 when as is, else
// the letter after the backslash, or 'u' for \u00XX.
func jsonEscape(b byte) byte {
	switch {
	case b == '"' || b == '\\':
		return b
	case b >= 0x20:
		return 0
	case b == '\b':
		return 'b'
	case b == '\f':
		return 'f'
	case b == '\n':
		return 'n'
	case b == '\r':
		return 'r'
	case b == '\t':
		return 't'
	}
	return 'u'
}

// jsonSize is the length of appendJSON's output for src.
func jsonSize(src []byte) int {
	n := 2
	for i := 0; i < len(src); {
		if b := src[i]; b < utf8.RuneSelf {
			switch jsonEscape(b) {
			case 0:
				n++
			case 'u':
				n += 6
			default:
				n += 2
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(src[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			n += 6
		} else {
			n += size
		}
		i += size
	}
	return n
}

// appendJSON appends src as a JSON string literal, as encoding/json writes
// it with HTML escaping off: " and \ and the control bytes escaped (\b \f
// \n \r \t, others \u00XX), U+2028 and U+2029 written \u2028 and \u2029,
// a byte that is not UTF-8 written \ufffd, everything else as is.
func appendJSON(dst, src []byte) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(src); {
		if b := src[i]; b < utf8.RuneSelf {
			e := jsonEscape(b)
			if e == 0 {
				i++
				continue
			}
			dst = append(dst, src[start:i]...)
			if e == 'u' {
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			} else {
				dst = append(dst, '\\', e)
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(src[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, src[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, src[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, src[start:]...)
	return append(dst, '"')
}
