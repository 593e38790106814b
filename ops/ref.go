package ops

import (
	"strconv"
	"strings"

	"github.com/arca-secrets/arca/manifest"
)

// Ref is a parsed arca:// reference. Env is the pin ("" when the ref has two
// segments).
type Ref struct {
	Env, NS, Name string
	path          string // "ns/name", a substring of the parsed ref
	canonical     string // "arca://ns/name"
}

const scheme = "arca://"

// ParseRef parses s by the grammar
//
//	ref     = "arca://" [ env "/" ] ns "/" name
//	segment = 1 to 128 of [A-Za-z0-9._-], starting with a letter or digit
//
// Every failure is bad_request. Messages describe the problem and never echo
// the ref.
func ParseRef(s string) (Ref, error) {
	if len(s) > manifest.MaxRef {
		return Ref{}, Errorf(manifest.BadRequest, "invalid ref: longer than %d bytes", manifest.MaxRef)
	}
	rest, ok := strings.CutPrefix(s, scheme)
	if !ok {
		if len(s) >= len(scheme) && strings.EqualFold(s[:len(scheme)], scheme) {
			return Ref{}, Errorf(manifest.BadRequest, "invalid ref: scheme must be lower-case %q", scheme)
		}
		return Ref{}, Errorf(manifest.BadRequest, "invalid ref: must start with %q", scheme)
	}
	var segs [3]string
	n := strings.Count(rest, "/") + 1
	switch n {
	case 2:
		segs[1], segs[2], _ = strings.Cut(rest, "/")
	case 3:
		segs[0], rest, _ = strings.Cut(rest, "/")
		segs[1], segs[2], _ = strings.Cut(rest, "/")
	default:
		unit := "segments"
		if n == 1 {
			unit = "segment"
		}
		return Ref{}, Errorf(manifest.BadRequest, "invalid ref: %d %s, want ns/name or env/ns/name", n, unit)
	}
	roles := [3]string{"env", "ns", "name"}
	for i := 3 - n; i < 3; i++ {
		if p := segmentProblem(segs[i]); p != "" {
			return Ref{}, Errorf(manifest.BadRequest, "invalid ref: segment %d (%s) %s", i-(3-n)+1, roles[i], p)
		}
	}
	r := Ref{Env: segs[0], NS: segs[1], Name: segs[2], path: s[len(s)-len(segs[1])-1-len(segs[2]):]}
	r.canonical = s
	if r.Env != "" {
		r.canonical = scheme + r.path
	}
	return r, nil
}

// Path is the bare "ns/name" that audit events and PDP requests carry.
func (r Ref) Path() string {
	if r.path == "" && r.NS != "" {
		return r.NS + "/" + r.Name
	}
	return r.path
}

// Canonical is the unpinned "arca://ns/name" used in results.
func (r Ref) Canonical() string {
	if r.canonical == "" && r.NS != "" {
		return scheme + r.NS + "/" + r.Name
	}
	return r.canonical
}

// ValidSegment reports whether s is a valid ref segment (env, ns or name).
func ValidSegment(s string) bool { return segmentProblem(s) == "" }

// segmentProblem describes what makes s an invalid segment, or returns "".
// The description never quotes more than one printable ASCII character of s.
func segmentProblem(s string) string {
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
