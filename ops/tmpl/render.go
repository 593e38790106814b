package tmpl

import (
	"encoding/base64"
	"fmt"
	"io"
	"slices"

	"github.com/arca-secrets/arca/ops/ref"
	"github.com/arca-secrets/arca/vault"
)

// Render writes the template to w, each ref action replaced by the value of
// its ref through its filters and each literal by its two bytes.
//
// value is called once for each ref of Refs, in that order, before anything
// is rendered; the caller has resolved them all. Render does not check what
// it returns: a zero Secret is written as an empty value.
//
// The output is built in memory and given to w in one Write once all of it
// is built, so when Render fails for the template's sake nothing has been
// written: a value a filter cannot encode (shell, given a NUL) fails as
// NAME:LINE:COL: REF: message, naming the action and the ref as written,
// never the value; so does an output that would be over MaxOutput. An
// error of w is returned wrapped, as NAME: writing the output: ERR.
func (t *Template) Render(w io.Writer, value func(ref.Ref) vault.Secret) error {
	vals := make([]vault.Secret, len(t.refs))
	for i, r := range t.refs {
		vals[i] = value(r)
	}
	out, err := t.render(vals)
	if err != nil {
		return err
	}
	if _, err := w.Write(out); err != nil {
		return fmt.Errorf("%s: writing the output: %w", t.name, err)
	}
	return nil
}

// render builds the output with vals, the values of t.refs.
func (t *Template) render(vals []vault.Secret) ([]byte, error) {
	out := make([]byte, 0, t.sizeHint(vals))
	var scratch [2][]byte
	prev := 0
	for _, a := range t.actions {
		out = append(out, t.text[prev:a.text]...)
		prev = a.text
		var err error
		if out, err = t.write(out, a, vals[a.ref].Reveal(), &scratch); err != nil {
			return nil, err
		}
	}
	return append(out, t.text[prev:]...), nil
}

// write appends a's output for the value v to out. scratch holds the
// output of a filter that is not the last, two buffers used in turn and
// kept from one action to the next.
func (t *Template) write(out []byte, a action, v []byte, scratch *[2][]byte) ([]byte, error) {
	// Filters never shrink their input: an output over room, the bytes
	// left to MaxOutput once the text still to come is counted, makes the
	// whole too large.
	room := MaxOutput - len(out) - (len(t.text) - a.text)
	fs := t.filters[a.from:a.to]
	if len(fs) == 0 {
		if len(v) > room {
			return nil, t.tooLarge(a)
		}
		return append(out, v...), nil
	}
	in := v
	for i, f := range fs[:len(fs)-1] {
		n, err := t.size(a, f, in, room)
		if err != nil {
			return nil, err
		}
		s := &scratch[i%2]
		*s = f.append(slices.Grow((*s)[:0], n), in)
		in = *s
	}
	last := fs[len(fs)-1]
	n, err := t.size(a, last, in, room)
	if err != nil {
		return nil, err
	}
	return last.append(slices.Grow(out, n), in), nil
}

// size is the length of f's output for in, or the error of a when f cannot
// encode in or its output is over room.
func (t *Template) size(a action, f filter, in []byte, room int) (int, error) {
	n := f.size(in)
	switch {
	case n < 0:
		return 0, t.fail(a, "shell cannot quote a value holding a NUL byte")
	case n > room:
		return 0, t.tooLarge(a)
	}
	return n, nil
}

// sizeHint is about the length of the output with vals, at most MaxOutput:
// the text, and each value the length the base64 filter makes it or 2
// bytes longer for the others.
func (t *Template) sizeHint(vals []vault.Secret) int {
	n := len(t.text)
	for _, a := range t.actions {
		m := vals[a.ref].Len()
		for _, f := range t.filters[a.from:a.to] {
			if f == base64Filter {
				m = base64.StdEncoding.EncodedLen(min(m, MaxOutput))
			} else {
				m += 2
			}
		}
		n = min(n+min(m, MaxOutput), MaxOutput)
	}
	return n
}

// fail is the error of a for its ref: NAME:LINE:COL: REF: message.
func (t *Template) fail(a action, msg string) error {
	return fmt.Errorf("%s:%d:%d: %s: %s", t.name, a.line, a.col, refText(t.refs[a.ref]), msg)
}

// tooLarge is the error of an output over MaxOutput, given at the action
// that takes it over.
func (t *Template) tooLarge(a action) error {
	return t.fail(a, fmt.Sprintf("the output would be larger than %d bytes (64 MiB)", MaxOutput))
}
