// Package schemaof derives the JSON Schema (draft 2020-12) of a Go type
// as encoding/json writes it, so that a documented --json shape is read
// off the type that prints it and cannot drift from it.
//
// The rules are encoding/json's: a field's name is its json tag's (a tag
// "-" or an unexported field is left out), an omitempty field is not
// required, an embedded struct's fields are the outer struct's; a nil
// slice, map or pointer is written null. time.Time is an RFC 3339 string.
// An object holds its fields and no others (additionalProperties false):
// the shape as it is today; readers still ignore fields they do not know,
// since shapes only ever gain fields. A type with a MarshalJSON method of
// its own is refused, since its shape is not its fields'.
package schemaof

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"
)

// maxDepth bounds how deep a type may nest, a recursive one included.
const maxDepth = 32

// Of returns the indented JSON Schema of v's type, titled title.
func Of(title string, v any) ([]byte, error) {
	s, err := schema(reflect.TypeOf(v), 0)
	if err != nil {
		return nil, err
	}
	s["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	s["title"] = title
	return json.MarshalIndent(s, "", "  ")
}

var (
	timeType      = reflect.TypeFor[time.Time]()
	marshalerType = reflect.TypeFor[json.Marshaler]()
)

func schema(t reflect.Type, depth int) (map[string]any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("%s nests more than %d deep", t, maxDepth)
	}
	switch {
	case t == timeType:
		return map[string]any{"type": "string", "format": "date-time"}, nil
	case t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType):
		return nil, fmt.Errorf("%s writes its own JSON: its shape is not its fields'", t)
	}
	switch t.Kind() {
	case reflect.Bool:
		return map[string]any{"type": "boolean"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}, nil
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}, nil
	case reflect.String:
		return map[string]any{"type": "string"}, nil
	case reflect.Interface:
		return map[string]any{}, nil
	case reflect.Pointer:
		return nullable(t.Elem(), depth)
	case reflect.Slice, reflect.Array:
		items, err := schema(t.Elem(), depth+1)
		if err != nil {
			return nil, err
		}
		s := map[string]any{"type": "array", "items": items}
		if t.Kind() == reflect.Slice {
			s["type"] = []string{"array", "null"}
		}
		return s, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, fmt.Errorf("%s: a map's keys must be strings", t)
		}
		vals, err := schema(t.Elem(), depth+1)
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": []string{"object", "null"}, "additionalProperties": vals}, nil
	case reflect.Struct:
		return object(t, depth)
	}
	return nil, fmt.Errorf("%s: no JSON for a %s", t, t.Kind())
}

// nullable is the schema of t or null.
func nullable(t reflect.Type, depth int) (map[string]any, error) {
	s, err := schema(t, depth+1)
	if err != nil {
		return nil, err
	}
	return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}, nil
}

// object is the schema of struct t.
func object(t reflect.Type, depth int) (map[string]any, error) {
	props, required := map[string]any{}, []string{}
	if err := fields(t, depth, props, &required); err != nil {
		return nil, err
	}
	return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}, nil
}

// fields adds t's fields, an embedded struct's among them, to props.
func fields(t reflect.Type, depth int, props map[string]any, required *[]string) error {
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		if tag == "-" || !f.IsExported() && !f.Anonymous {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			if err := fields(f.Type, depth, props, required); err != nil {
				return err
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		s, err := schema(f.Type, depth+1)
		if err != nil {
			return fmt.Errorf("%s.%s: %w", t, f.Name, err)
		}
		props[name] = s
		if !strings.Contains(","+opts+",", ",omitempty,") && !strings.Contains(","+opts+",", ",omitzero,") {
			*required = append(*required, name)
		}
	}
	return nil
}
