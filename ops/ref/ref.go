// Package ref parses arca:// references (SPEC §2) and checks the segments
// they are made of, which env, vault and namespace names share.
//
//	ref     = "arca://" [ env "/" ] ns "/" name
//	segment = 1 to 128 of [A-Za-z0-9._-], starting with a letter or digit
//
// Errors are plain: every failure of Parse is a bad request, and the ops
// layer gives it that code. Messages describe the problem and never echo the
// ref. Limits (from manifest): a ref is at most MaxRef bytes, checked before
// it is parsed; a segment at most MaxSegment characters.
package ref

import (
	"fmt"
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

// Scheme starts every ref; it is matched case-sensitively.
const Scheme = "arca://"

// Parse parses s by the grammar in the package doc.
func Parse(s string) (Ref, error) {
	if len(s) > manifest.MaxRef {
		return Ref{}, fmt.Errorf("invalid ref: longer than %d bytes", manifest.MaxRef)
	}
	rest, ok := strings.CutPrefix(s, Scheme)
	if !ok {
		if len(s) >= len(Scheme) && strings.EqualFold(s[:len(Scheme)], Scheme) {
			return Ref{}, fmt.Errorf("invalid ref: scheme must be lower-case %q", Scheme)
		}
		return Ref{}, fmt.Errorf("invalid ref: must start with %q", Scheme)
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
		return Ref{}, fmt.Errorf("invalid ref: %d %s, want ns/name or env/ns/name", n, unit)
	}
	roles := [3]string{"env", "ns", "name"}
	for i := 3 - n; i < 3; i++ {
		if p := SegmentProblem(segs[i]); p != "" {
			return Ref{}, fmt.Errorf("invalid ref: segment %d (%s) %s", i-(3-n)+1, roles[i], p)
		}
	}
	r := Ref{Env: segs[0], NS: segs[1], Name: segs[2], path: s[len(s)-len(segs[1])-1-len(segs[2]):]}
	r.canonical = s
	if r.Env != "" {
		r.canonical = Scheme + r.path
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
		return Scheme + r.NS + "/" + r.Name
	}
	return r.canonical
}
