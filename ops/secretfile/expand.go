package secretfile

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/arca-secrets/arca/manifest"
)

// The expansion of --expand (Options.Expand), for dotenv alone: the
// interpolation of python-dotenv and Docker Compose, in one pass.
//
//   - In an unquoted or double-quoted value, $NAME and ${NAME} are the
//     value of NAME: an earlier key of the same file (its value once
//     expanded), else the variable NAME of the environment (Options.Lookup).
//     NAME is [A-Za-z_][A-Za-z0-9_]*. Unset, it is an error naming the key
//     and which reference of the value it is, 1 for the first (Compose
//     would write nothing, and warn). NAME itself is not named: it is text
//     of the value, and a $ inside a password reads as a reference.
//   - ${NAME:-default} is default when NAME is unset or empty;
//     ${NAME-default} when it is unset. default is taken as written, up to
//     the first }, and is not expanded itself.
//   - \$ is a $ that starts nothing: in double quotes, as the parser
//     decodes it; in an unquoted value, the backslash dropped.
//   - $$ stays $$ (Compose writes one $; write \$ for that), and a $
//     followed by anything else ($1, a $ at the end) is a $.
//   - A ${ without a closing } or a valid NAME, or of another form
//     (${NAME:?err}, ${NAME:+alt}), is an error naming the key.
//   - A single-quoted value is taken literally: nothing in it is expanded.
//   - One pass: what a value expands to is never expanded again, so a
//     value is at most its own bytes and those of the values it names; a
//     result over manifest.MaxValue is an error.
//
// Without --expand nothing is expanded, and refsIn tells which values hold
// a reference that a dotenv reader would expand, so that the user hears of
// them.

// expander expands the values of one dotenv file.
type expander struct {
	lookup  func(string) (string, bool)
	earlier map[string]string // the keys read so far, their values expanded
	total   int               // the bytes of every value expanded so far
}

// refScan is a value to scan for references, as the dotenv parser read it.
type refScan struct {
	v        []byte
	lit      []int // offsets in v of $ that \$ wrote (double quotes), ascending
	unquoted bool  // \$ in v is an escaped $ (the parser left it as is)
}

// varRef is a reference in a value: where it is, its NAME, and for
// ${NAME-default} the default and whether it applies to an empty NAME
// too (":-").
type varRef struct {
	n          int // 1 for the value's first reference, 2 for the next, …
	start, end int
	name       string
	def        []byte
	hasDef     bool
	emptyToo   bool
}

// scan calls lit for each run of literal bytes and ref for each reference
// of s, in order; an error is a malformed ${.
func (s refScan) scan(lit func([]byte), onRef func(varRef) error) error {
	v, from, li, n := s.v, 0, 0, 0 // li: the first of s.lit not before i; n: references so far
	escaped := func(i int) bool {
		for li < len(s.lit) && s.lit[li] < i {
			li++
		}
		return li < len(s.lit) && s.lit[li] == i
	}
	for i := 0; i < len(v); i++ {
		switch {
		case s.unquoted && v[i] == '\\' && i+1 < len(v) && v[i+1] == '$':
			lit(v[from:i])
			from = i + 1 // keep the $ as literal text
			i++
		case v[i] == '$' && i+1 < len(v) && v[i+1] == '$' && !escaped(i):
			i++ // $$ stays $$: neither starts a reference
		case v[i] != '$' || escaped(i) || i+1 == len(v):
		case v[i+1] == '{':
			n++
			r, err := braced(v, i)
			if err != nil {
				return fmt.Errorf("reference %d of the value: %v", n, err)
			}
			r.n = n
			lit(v[from:i])
			if err := onRef(r); err != nil {
				return err
			}
			from, i = r.end, r.end-1
		case nameStart(v[i+1]):
			j := i + 2
			for j < len(v) && nameByte(v[j]) {
				j++
			}
			n++
			lit(v[from:i])
			if err := onRef(varRef{n: n, start: i, end: j, name: string(v[i+1 : j])}); err != nil {
				return err
			}
			from, i = j, j-1
		}
	}
	lit(v[from:])
	return nil
}

// braced reads the ${…} at v[i].
func braced(v []byte, i int) (varRef, error) {
	end := bytes.IndexByte(v[i:], '}')
	if end < 0 {
		return varRef{}, fmt.Errorf("${ is not closed (write \\$ for a $ that starts nothing)")
	}
	body := v[i+2 : i+end]
	n := 0
	for n < len(body) && nameByte(body[n]) {
		n++
	}
	if n == 0 || !nameStart(body[0]) {
		return varRef{}, fmt.Errorf("${...} does not start with a variable name [A-Za-z_][A-Za-z0-9_]*")
	}
	r := varRef{start: i, end: i + end + 1, name: string(body[:n])}
	rest := body[n:]
	switch {
	case len(rest) == 0:
	case bytes.HasPrefix(rest, []byte(":-")):
		r.def, r.hasDef, r.emptyToo = rest[2:], true, true
	case rest[0] == '-':
		r.def, r.hasDef = rest[1:], true
	default:
		return varRef{}, fmt.Errorf("only ${NAME}, ${NAME:-default} and ${NAME-default} are expanded")
	}
	return r, nil
}

func nameStart(c byte) bool { return c == '_' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' }
func nameByte(c byte) bool  { return nameStart(c) || '0' <= c && c <= '9' }

// refsIn reports whether s holds a reference that a dotenv reader would
// expand; a malformed ${ counts.
func refsIn(s refScan) bool {
	found := false
	err := s.scan(func([]byte) {}, func(varRef) error { found = true; return errStop })
	return found || err != nil && !errors.Is(err, errStop)
}

// errStop ends a scan that found what it looked for.
var errStop = errors.New("stop")

// expand returns s's value expanded, and remembers it as key's.
func (x *expander) expand(key string, s refScan) ([]byte, error) {
	var out []byte
	grow := func(b []byte) error {
		if len(out)+len(b) > manifest.MaxValue {
			return fmt.Errorf("the value is larger than %d bytes (64 KiB) once expanded", manifest.MaxValue)
		}
		if x.total+len(out)+len(b) > MaxInput {
			return fmt.Errorf("the values expand to more than %d bytes (64 MiB) in all, the most an input may hold", MaxInput)
		}
		out = append(out, b...)
		return nil
	}
	var litErr error
	err := s.scan(func(b []byte) {
		if litErr == nil {
			litErr = grow(b)
		}
	}, func(r varRef) error {
		if litErr != nil {
			return litErr
		}
		val, set := x.earlier[r.name]
		if !set && x.lookup != nil {
			val, set = x.lookup(r.name)
		}
		switch {
		case r.hasDef && (!set || r.emptyToo && val == ""):
			return grow(r.def)
		case !set:
			return fmt.Errorf("reference %d of the value names a variable that is neither a key before it in the file nor set in the environment, where ARCA_* settings and cloud credentials count as unset (${NAME:-default} gives a default)", r.n)
		}
		return grow([]byte(val))
	})
	if err == nil {
		err = litErr
	}
	if err != nil {
		return nil, err
	}
	x.total += len(out)
	x.earlier[key] = string(out)
	return out, nil
}

// literal remembers key's value as it is (a single-quoted value).
func (x *expander) literal(key string, v []byte) { x.earlier[key] = string(v) }
