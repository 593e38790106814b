// Package scrub redacts registered values from text: the one engine behind
// every place arca keeps a value it released out of text that is passed
// on (a command's output, a tool's output an agent host reads).
//
//	Set     the values, each under a label (a ref, a variable's name), and
//	        the forms of each that are matched
//	Stream  a writer that passes text on with every occurrence of a form
//	        replaced, however the writes cut the text
//	Scrub   the same for one whole text
//
// The forms of a value: its bytes; each line of a multi-line value, of
// MinLineLen bytes or more, without its "\n" or "\r\n"; the inside of a
// JSON string as encoding/json writes it (with and without its HTML
// escapes \u003c \u003e \u0026), with every control character as \u00XX,
// and with / as \/; url.QueryEscape and url.PathEscape, also with / left as it is (a
// path of segments); every byte but RFC 3986's unreserved ones as %XX
// (Python's urllib.parse.quote), with / escaped or left; hex, lower and
// upper case; base64, standard and URL alphabets, at each of the three
// alignments the value can have inside a longer encoded text, only the
// characters the value alone determines (so padded or not alike); and
// shell single-quote escaping (each ' written as the four bytes quote,
// backslash, quote, quote, or as the five quote, double quote, quote,
// double quote, quote that Python's shlex.quote writes); and HTML
// escaping, as Go's html.EscapeString writes it (&#34; &#39;) and as
// Python's html.escape does (&quot; &#x27;). Forms equal to one another
// are kept once, of the value registered first.
//
// A value under MinLen bytes is not registered (Add returns ErrTooShort
// and Unscrubbable lists its label): it would wreck the text. A form under
// Anywhere bytes (a value of 4 to 6 bytes, or a base64 fragment of one)
// matches only where neither neighbour is an ASCII letter or digit.
//
// Occurrences that overlap or touch, of one value or several, become one
// placeholder, so no byte of any value survives: <redacted:LABEL>, or
// <redacted:A+B> with the labels of every value in it, each once, in the
// order their first occurrences start (the style of arca run --mask's
// marks; unlike those, touching occurrences join, and a value found inside
// another is named too). A Stream counts the placeholders naming each
// label.
//
// The engine reads bytes and never decodes UTF-8. It cannot catch a value
// that a program transforms on purpose (reverses, encrypts, splits with
// other text between the parts, encodes in a way not listed above), nor a
// value under MinLen bytes. It holds values and forms in memory only, and
// nothing of it prints them: Set and Stream format as their type's name.
//
// Bounds: at most MaxValues values, each at most MaxValueLen bytes, and
// at most MaxFormBytes bytes of forms in all; a Stream holds back only
// the bytes at the end of what it was given that could still begin an
// occurrence, at most the longest form less one byte (see Stream).
package scrub

import (
	"errors"
	"fmt"
	"sync"
)

const (
	// MinLen is the shortest value registered.
	MinLen = 4
	// Anywhere is the shortest form matched whatever its neighbours.
	Anywhere = 7
	// MinLineLen is the shortest line of a multi-line value matched alone.
	MinLineLen = 8
	// MaxValues bounds the values of a Set.
	MaxValues = 4096
	// MaxValueLen bounds a value.
	MaxValueLen = 64 << 10
	// MaxFormBytes bounds the bytes of all the forms of a Set.
	MaxFormBytes = 32 << 20
	// MaxLabelLen bounds a label.
	MaxLabelLen = 256
)

// ErrTooShort is Add's answer for a value under MinLen bytes.
var ErrTooShort = errors.New("scrub: a value under 4 bytes cannot be scrubbed")

// A Set holds values and their forms. It is safe for concurrent use: a
// value added while a Stream is open applies to the bytes that Stream has
// not yet passed on.
type Set struct{ st *state }

// state is a Set's: behind a pointer, so that a Set can be copied and
// printed (as its name) without copying the lock.
type state struct {
	mu           sync.Mutex
	labels       []string            // distinct, in the order first added
	labelIndex   map[string]int      // into labels
	seen         map[string]struct{} // the values, so that one added again is not counted again
	values       []int               // each value's label, by index into labels
	forms        []form              // every value's forms, not yet deduplicated across values
	formBytes    int
	unscrubbable []string // labels of values refused as too short, each once
	m            *matcher // built from forms; nil when a value was added since
}

// NewSet returns an empty Set.
func NewSet() *Set {
	return &Set{st: &state{labelIndex: map[string]int{}, seen: map[string]struct{}{}}}
}

// Add registers value under label, copying it. A value added before, under
// any label, is left as it is (the first label names it). A value under
// MinLen bytes is refused with ErrTooShort and its label listed by
// Unscrubbable. A
// label is 1 to MaxLabelLen bytes, none of them a control character, '<',
// '>' or '+' (it is written into placeholders). Errors name the bound,
// never the value.
func (set *Set) Add(label string, value []byte) error {
	if err := checkLabel(label); err != nil {
		return err
	}
	s := set.st
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case len(value) < MinLen:
		if !contains(s.unscrubbable, label) {
			s.unscrubbable = append(s.unscrubbable, label)
		}
		return ErrTooShort
	case has(s.seen, value):
		return nil
	case len(value) > MaxValueLen:
		return fmt.Errorf("scrub: a value over %d bytes (MaxValueLen)", MaxValueLen)
	case len(s.values) >= MaxValues:
		return fmt.Errorf("scrub: more than %d values (MaxValues)", MaxValues)
	}
	fs := formsOf(append([]byte(nil), value...))
	n := 0
	for _, f := range fs {
		n += len(f)
	}
	if s.formBytes+n > MaxFormBytes {
		return fmt.Errorf("scrub: more than %d bytes of forms (MaxFormBytes)", MaxFormBytes)
	}
	li, ok := s.labelIndex[label]
	if !ok {
		li = len(s.labels)
		s.labels = append(s.labels, label)
		s.labelIndex[label] = li
	}
	v := len(s.values)
	s.values = append(s.values, li)
	s.seen[string(value)] = struct{}{}
	for _, f := range fs {
		s.forms = append(s.forms, form{b: f, value: v, boundary: len(f) < Anywhere})
	}
	s.formBytes += n
	s.m = nil
	return nil
}

// checkLabel says what is wrong with label, if anything.
func checkLabel(label string) error {
	if len(label) == 0 || len(label) > MaxLabelLen {
		return fmt.Errorf("scrub: a label must be 1 to %d bytes (MaxLabelLen)", MaxLabelLen)
	}
	for i := 0; i < len(label); i++ {
		if c := label[i]; c < 0x20 || c == 0x7f || c == '<' || c == '>' || c == '+' {
			return errors.New("scrub: a label holds a control character, '<', '>' or '+'")
		}
	}
	return nil
}

func has(seen map[string]struct{}, v []byte) bool {
	_, ok := seen[string(v)]
	return ok
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

// Unscrubbable returns the labels of the values refused as too short,
// each once, in the order first refused.
func (set *Set) Unscrubbable() []string {
	s := set.st
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.unscrubbable...)
}

// Forms returns how many distinct forms the Set matches.
func (s *Set) Forms() int {
	m, _, _ := s.snapshot()
	return len(m.forms)
}

// snapshot returns the matcher of the values added so far, building it if
// a value was added since the last was built, with the value-to-label
// table and the labels it was built with. Later Adds only append to
// them, so what the matcher names stays valid.
func (set *Set) snapshot() (*matcher, []int, []string) {
	s := set.st
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = newMatcher(distinct(s.forms))
	}
	return s.m, s.values, s.labels
}

// distinct keeps the first of forms with equal bytes, in order.
func distinct(forms []form) []form {
	seen := make(map[string]struct{}, len(forms))
	out := make([]form, 0, len(forms))
	for _, f := range forms {
		if _, ok := seen[string(f.b)]; !ok {
			seen[string(f.b)] = struct{}{}
			out = append(out, f)
		}
	}
	return out
}
