package secretfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/arca-secrets/arca/ops/ref"
)

// WriteDotenv writes es to w as dotenv, one NAME=value line each in the
// order given, all in one Write (nothing is written when an entry is
// refused). NS is not written. A value is written bare when it is not
// empty and has only [A-Za-z0-9_./:@%+,=-]; else in single quotes when it
// holds no single quote, CR or LF (taken literally by Parse and by
// shells); else in double quotes, with \ " $ ` written \\ \" \$ \` and
// newline, CR and tab written \n \r \t, every other byte as is. So Parse as
// dotenv reads back exactly es, and a shell that sources the file runs
// nothing a value holds (though a value with a newline reads back there
// with a literal \n).
//
// Refused: a name that is not a valid segment, a name given twice, a value
// Parse would refuse (not UTF-8, over 64 KiB).
func WriteDotenv(w io.Writer, es []Entry) error {
	if err := checkEntries(es, false); err != nil {
		return err
	}
	var b bytes.Buffer
	for _, e := range es {
		b.WriteString(e.Name)
		b.WriteByte('=')
		v := e.Value.Reveal()
		switch {
		case len(v) > 0 && bytes.IndexFunc(v, func(r rune) bool { return !isBare(r) }) < 0:
			b.Write(v)
		case bytes.IndexAny(v, "'\r\n") < 0:
			b.WriteByte('\'')
			b.Write(v)
			b.WriteByte('\'')
		default:
			writeDoubleQuoted(&b, v)
		}
		b.WriteByte('\n')
	}
	_, err := w.Write(b.Bytes())
	return err
}

// writeDoubleQuoted writes v in double quotes, escaped as WriteDotenv says.
func writeDoubleQuoted(b *bytes.Buffer, v []byte) {
	b.WriteByte('"')
	for _, c := range v {
		switch c {
		case '\\', '"', '$', '`':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
}

func isBare(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("_./:@%+,=-", r)
}

// WriteJSON writes es to w as one JSON object, all in one Write: for Flat
// {"name": "value", …} (NS is not written), for Nested {"ns": {"name":
// "value", …}, …}. Keys are sorted, the indent is two spaces, a newline
// ends it, and <, > and & are not escaped. Parse as json reads back es in
// that sorted order (an empty Nested output, {}, reads back as Flat).
//
// Refused: a name (and for Nested a namespace) that is not a valid
// segment, a name given twice (in one namespace), a value Parse would
// refuse: not UTF-8 (a JSON string holds text only, and encoding/json
// would change the bytes), over 64 KiB.
func WriteJSON(w io.Writer, es []Entry, shape Shape) error {
	if err := checkEntries(es, shape == Nested); err != nil {
		return err
	}
	var doc any
	switch shape {
	case Flat:
		m := make(map[string]string, len(es))
		for _, e := range es {
			m[e.Name] = string(e.Value.Reveal())
		}
		doc = m
	case Nested:
		m := map[string]map[string]string{}
		for _, e := range es {
			if m[e.NS] == nil {
				m[e.NS] = map[string]string{}
			}
			m[e.NS][e.Name] = string(e.Value.Reveal())
		}
		doc = m
	default:
		return fmt.Errorf("unknown shape %d", shape)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b) // encoding/json writes map keys sorted
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

// checkEntries refuses what the encoders do not write: an invalid name or
// namespace (the namespace only when nested), a repeat, a bad value.
func checkEntries(es []Entry, nested bool) error {
	seen := make(map[[2]string]int, len(es))
	for i, e := range es {
		at := fmt.Sprintf("entry %d", i+1)
		if nested {
			if p := ref.SegmentProblem(e.NS); p != "" {
				return fmt.Errorf("%s: namespace %s is not a valid name: %s", at, quoteName(e.NS), p)
			}
		}
		if p := nameProblem(e.Name); p != "" {
			return fmt.Errorf("%s: name %s", at, p)
		}
		k := [2]string{"", e.Name}
		if nested {
			k[0] = e.NS
		}
		if first, ok := seen[k]; ok {
			name := e.Name
			if nested {
				name = e.NS + "/" + e.Name
			}
			return fmt.Errorf("%s: %s is also entry %d", at, name, first)
		}
		seen[k] = i + 1
		if p := valueProblem(e.Value.Reveal()); p != "" {
			return fmt.Errorf("%s (%s): %s", at, e.Name, p)
		}
	}
	return nil
}
