package config

import (
	"reflect"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// Bounds on a config's shape. go-toml's check for duplicate keys takes
// time quadratic in the keys of one table, and its report of unknown keys
// time proportional to their number times the file's size: 1 MiB of
// unknown keys took minutes. A scan linear in the file's size (this file)
// counts the keys and finds the unknown ones before go-toml decodes.
const (
	// MaxKeys bounds the keys of a config: every part of every key and
	// table header, in inline tables too.
	MaxKeys = 4096
	// maxStrictUnknown is the most unknown keys go-toml is left to report
	// (its messages are the ones documented); the scan reports more itself.
	maxStrictUnknown = 8
)

// shape is what the scan learns of a config.
type shape struct {
	keys    int      // key parts, up to MaxKeys+1
	unknown int      // keys and tables no field of the document takes
	first   []string // the first unknown key in document order
	at      int      // its offset in the file
	syntax  bool     // the scan stopped at a syntax error
}

// scanner walks a config's expressions against the document's type,
// telling unknown keys as go-toml's strict mode does: a table no field
// takes counts once and hides its key-values, a key-value no field takes
// counts once with its whole key, and inside an inline table the key is
// its own.
type scanner struct {
	shape
	table reflect.Type // of the current table; nil inside an unknown one
	path  []string     // the current table's key
}

// scanShape scans data, stopping once it holds more than MaxKeys keys.
func scanShape(data []byte) shape {
	var p unstable.Parser
	p.Reset(data)
	s := scanner{table: reflect.TypeFor[document]()}
	for s.keys <= MaxKeys && p.NextExpression() {
		s.expression(p.Expression())
	}
	s.syntax = p.Error() != nil
	return s.shape
}

func (s *scanner) expression(e *unstable.Node) {
	s.keys += countKeys(e)
	switch e.Kind {
	case unstable.Table, unstable.ArrayTable:
		s.path = s.keyParts(e.Key(), s.path[:0])
		t, ok := walk(reflect.TypeFor[document](), s.path)
		if !ok {
			s.missing(s.path, e.Key())
			s.table = nil
			return
		}
		s.table = elem(t)
	case unstable.KeyValue:
		if s.table != nil {
			s.keyValue(e, s.table, s.path)
		}
	}
}

// keyValue checks the key-value e in a table of type t whose key is path.
func (s *scanner) keyValue(e *unstable.Node, t reflect.Type, path []string) {
	parts := s.keyParts(e.Key(), nil)
	t, ok := walk(t, parts)
	if !ok {
		s.missing(append(path[:len(path):len(path)], parts...), e.Key())
		return
	}
	s.value(e.Value(), t)
}

// value checks the tables a value of type t holds.
func (s *scanner) value(v *unstable.Node, t reflect.Type) {
	switch v.Kind {
	case unstable.InlineTable:
		for it := v.Children(); it.Next(); {
			s.keyValue(it.Node(), elem(t), nil)
		}
	case unstable.Array:
		for it := v.Children(); it.Next(); {
			s.value(it.Node(), sliceElem(t))
		}
	}
}

// keyParts appends the parts of key to dst.
func (s *scanner) keyParts(key unstable.Iterator, dst []string) []string {
	for key.Next() {
		dst = append(dst, string(key.Node().Data))
	}
	return dst
}

// countKeys counts the key parts of the expression or value n, those of
// the inline tables in its value included, known or not: go-toml checks
// every one for duplicates.
func countKeys(n *unstable.Node) int {
	keys := 0
	switch n.Kind {
	case unstable.Table, unstable.ArrayTable:
		for it := n.Key(); it.Next(); {
			keys++
		}
	case unstable.KeyValue:
		for it := n.Key(); it.Next(); {
			keys++
		}
		keys += countKeys(n.Value())
	case unstable.InlineTable, unstable.Array:
		for it := n.Children(); it.Next(); {
			keys += countKeys(it.Node())
		}
	}
	return keys
}

// missing counts an unknown key, keeping the first.
func (s *scanner) missing(key []string, it unstable.Iterator) {
	if s.unknown == 0 {
		s.first = append([]string(nil), key...)
		it.Next()
		s.at = int(it.Node().Raw.Offset)
	}
	s.unknown++
}

// walk follows key from t as go-toml does: a struct takes its fields'
// names (exactly, else ignoring case), a map any key, a slice stands for
// its last element; a value of another kind is go-toml's to refuse as the
// wrong type. ok is false when a part names nothing.
func walk(t reflect.Type, key []string) (reflect.Type, bool) {
	for i := 0; i < len(key); {
		if t == nil {
			return nil, true
		}
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array:
			t = t.Elem()
			continue
		case reflect.Map:
			t = t.Elem()
		case reflect.Struct:
			f, ok := field(t, key[i])
			if !ok {
				return nil, false
			}
			t = f
		default:
			return nil, true
		}
		i++
	}
	return t, true
}

// elem is the type a table of type t holds keys of: t through pointers and
// slices (an array table's element).
func elem(t reflect.Type) reflect.Type {
	for t != nil && (t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
		t = t.Elem()
	}
	return t
}

// sliceElem is the element type of an array value of type t, or nil.
func sliceElem(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || (t.Kind() != reflect.Slice && t.Kind() != reflect.Array) {
		return nil
	}
	return t.Elem()
}

// field is the type of t's field that the key name selects: the toml tag
// or the field's name, exactly or else ignoring case; embedded structs'
// fields count as t's own, "-" and unexported fields as none.
func field(t reflect.Type, name string) (reflect.Type, bool) {
	var fold reflect.Type
	for _, f := range reflect.VisibleFields(t) {
		tag, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if !f.IsExported() || tag == "-" || f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct {
			continue
		}
		if tag == "" {
			tag = f.Name
		}
		switch {
		case tag == name:
			return f.Type, true
		case fold == nil && strings.EqualFold(tag, name):
			fold = f.Type
		}
	}
	return fold, fold != nil
}
