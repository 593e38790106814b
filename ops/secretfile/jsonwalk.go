package secretfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/arca-secrets/arca/internal/jsonstr"
)

// jsonWalker reads a JSON text token by token (json.Decoder.Token), so
// that it can do what decoding into a map cannot: refuse a key set twice in
// one object (encoding/json keeps the last without a word), keep numbers
// and booleans as written (5432, not 5432.0), refuse an escape that is not
// UTF-8 (a lone surrogate, which encoding/json turns into U+FFFD) and give
// every place as a line number.
type jsonWalker struct {
	data  []byte
	dec   *json.Decoder
	prev  int64 // the offset before the last token read
	lines lineCounter
}

var jsonNonASCII = regexp.MustCompile(`invalid character '[^\x00-\x7f]+'`)

// jsonMaxDepth bounds the nesting of what the walker skips: no format reads
// deeper than four levels.
const jsonMaxDepth = 64

func newJSONWalker(data []byte) (*jsonWalker, error) {
	if err := checkUTF8(data); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return &jsonWalker{data: data, dec: dec, lines: lineCounter{data: data, line: 1}}, nil
}

// memberFunc handles one member of an object: its key, the key's line and
// the first token of its value. When that token is '{' or '[' it must read
// the rest of the value (with object, leaf or skip) or return an error.
type memberFunc func(key string, line int, v json.Token) error

// top reads the whole text, which must be one object, calling fn for each
// of its members.
func (w *jsonWalker) top(fn memberFunc) error {
	t, err := w.next()
	if err == io.EOF {
		return errors.New("empty input (want a JSON object)")
	}
	if err != nil {
		return err
	}
	if t != json.Delim('{') {
		return fmt.Errorf("line %d: the top level is %s (want an object)", w.line(), describe(t))
	}
	if err := w.object(nil, fn); err != nil {
		return err
	}
	if _, err := w.dec.Token(); err != io.EOF {
		return fmt.Errorf("line %d: data after the top-level object", w.lines.at(w.dec.InputOffset()))
	}
	return nil
}

// object reads the members of the object whose '{' was just read, through
// its '}', calling fn for each. path is the object's key path, for messages.
func (w *jsonWalker) object(path []string, fn memberFunc) error {
	seen := map[string]int{}
	for {
		t, err := w.next()
		if err != nil {
			return err
		}
		if t == json.Delim('}') {
			return nil
		}
		key := t.(string) // Token returns only strings (or '}') in key position
		line := w.line()
		if first, ok := seen[key]; ok {
			return fmt.Errorf("line %d: %s is also set on line %d", line, keyPath(append(slices.Clip(path), key)...), first)
		}
		seen[key] = line
		v, err := w.next()
		if err != nil {
			return err
		}
		if err := fn(key, line, v); err != nil {
			return err
		}
	}
}

// leaf returns the text of a value that stands for a secret: a string, or
// the literal text of a number or a boolean. Anything else is refused,
// naming path, the value's key path.
func (w *jsonWalker) leaf(v json.Token, line int, path []string) (string, error) {
	switch v := v.(type) {
	case string:
		if strings.ContainsRune(v, utf8.RuneError) && !strict(w.raw()) {
			return "", fmt.Errorf("line %d: %s: the value is not valid UTF-8 (a lone surrogate escape)", line, keyPath(path...))
		}
		return v, nil
	case json.Number:
		return string(v), nil
	case bool:
		return fmt.Sprint(v), nil
	}
	return "", fmt.Errorf("line %d: %s is %s (want a string)", line, keyPath(path...), describe(v))
}

// skip reads the rest of a value whose first token v was just read.
func (w *jsonWalker) skip(v json.Token) error {
	depth := 0
	for {
		switch v {
		case json.Delim('{'), json.Delim('['):
			depth++
			if depth > jsonMaxDepth {
				return fmt.Errorf("line %d: nested deeper than %d levels", w.line(), jsonMaxDepth)
			}
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
		var err error
		if v, err = w.next(); err != nil {
			return err
		}
	}
}

// next reads a token, turning a syntax error into one that names its line.
func (w *jsonWalker) next() (json.Token, error) {
	w.prev = w.dec.InputOffset()
	t, err := w.dec.Token()
	if err == nil || err == io.EOF && w.prev == 0 {
		return t, err
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		// encoding/json quotes the byte it stopped at as a rune: the first
		// byte of a UTF-8 sequence comes out as another character.
		msg := jsonNonASCII.ReplaceAllString(se.Error(), "a non-ASCII character")
		return nil, fmt.Errorf("line %d: not valid JSON: %s", w.lines.at(se.Offset), msg)
	}
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return nil, fmt.Errorf("line %d: not valid JSON: the input ends inside a value", w.lines.at(int64(len(w.data))))
	}
	return nil, fmt.Errorf("not valid JSON: %v", err)
}

// line is the line the last token read ends on.
func (w *jsonWalker) line() int { return w.lines.at(w.dec.InputOffset()) }

// raw is the text of the last token read.
func (w *jsonWalker) raw() []byte {
	return bytes.TrimLeft(w.data[w.prev:w.dec.InputOffset()], " \t\r\n,:")
}

// strict reports whether the string literal lit reads strictly (see
// jsonstr.Decode). encoding/json turns a lone surrogate escape into U+FFFD
// without a word; the file is UTF-8 and lit is JSON, so a lone surrogate
// is all that makes the strict reading refuse it.
func strict(lit []byte) bool {
	_, _, ok := jsonstr.Decode(lit)
	return ok
}

// describe names the kind of value a token starts, for messages.
func describe(t json.Token) string {
	switch t := t.(type) {
	case json.Delim:
		if t == '[' {
			return "an array"
		}
		return "an object"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "null"
}
