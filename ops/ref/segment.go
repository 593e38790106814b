package ref

import (
	"strconv"

	"github.com/arca-secrets/arca/manifest"
)

// ValidSegment reports whether s is a valid ref segment (env, ns or name).
func ValidSegment(s string) bool { return SegmentProblem(s) == "" }

// SegmentProblem describes what makes s an invalid segment, or returns "".
// The description reads after the segment's name ("is empty", "has a
// control character") and never quotes more than one printable ASCII
// character of s.
func SegmentProblem(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isSegmentByte(c):
		case c < 0x20 || c == 0x7f:
			return "has a control character"
		case c >= 0x80:
			return "has a non-ASCII character"
		default:
			return "has a character outside [A-Za-z0-9._-]: " + strconv.QuoteRune(rune(c))
		}
	}
	switch {
	case s == "":
		return "is empty"
	case len(s) > manifest.MaxSegment:
		return "is longer than " + strconv.Itoa(manifest.MaxSegment) + " characters"
	case !isAlnum(s[0]):
		return "must start with a letter or digit"
	}
	return ""
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func isSegmentByte(c byte) bool { return isAlnum(c) || c == '.' || c == '_' || c == '-' }
