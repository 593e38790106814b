package client

import (
	"unicode/utf8"

	"github.com/arca-secrets/arca/internal/jsonstr"
)

// The fast path's strings: scanned as encoding/json's scanner checks them,
// decoded as its unquote decodes them.

// str scans a string (jsonstr.Scan) and returns what is between its
// quotes; esc reports a backslash in it, high a byte over 0x7f. Escapes
// are checked as encoding/json's scanner checks them, and so are control
// characters.
func (d *dec) str() (body []byte, esc, high bool) {
	if d.i >= len(d.b) || d.b[d.i] != '"' { // serve writes no whitespace
		if d.peek() != '"' {
			d.fail()
			return nil, false, false
		}
	}
	n, esc, high := jsonstr.Scan(d.b[d.i:])
	if n < 0 {
		d.fail()
		return nil, false, false
	}
	body = d.b[d.i+1 : d.i+n-1]
	d.i += n
	return body, esc, high
}

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
	return string(jsonstr.Unquote(body))
}
