package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// A bundler makes one published schema out of the embedded sources. The
// sources share parts by relative $refs ("error.json",
// "response.json#/$defs/policy"); a published schema must validate with no
// other schema loaded, so every part it reaches is copied into its own
// $defs and every $ref is rewritten to point there ("#/$defs/policy").
type bundler struct {
	sources map[string]any    // decoded source files, by file name
	root    string            // "file#pointer" of the schema being bundled
	defs    map[string]any    // the $defs of the result, by name
	from    map[string]string // def name -> the "file#pointer" it copies
}

// bundle returns the source at file#ptr (ptr "" for the whole file) as a
// standalone schema. A whole file keeps all of its own $defs; a part of a
// file keeps only what it reaches.
func bundle(sources map[string]any, file, ptr string) (map[string]any, error) {
	b := &bundler{sources: sources, root: file + "#" + ptr, defs: map[string]any{}, from: map[string]string{}}
	node, err := b.resolve(file, ptr)
	if err != nil {
		return nil, err
	}
	if ptr == "" {
		own, _ := node["$defs"].(map[string]any)
		for _, name := range slices.Sorted(maps.Keys(own)) {
			if _, err := b.def(file, "/$defs/"+name); err != nil {
				return nil, err
			}
		}
	}
	out, err := b.rewrite(node, file)
	if err != nil {
		return nil, err
	}
	root := out.(map[string]any)
	for _, k := range []string{"$schema", "$id", "$defs"} {
		delete(root, k)
	}
	if len(b.defs) > 0 {
		root["$defs"] = b.defs
	}
	return root, nil
}

// resolve returns the object at ptr (a JSON pointer) in file.
func (b *bundler) resolve(file, ptr string) (map[string]any, error) {
	v, ok := b.sources[file]
	if !ok {
		return nil, fmt.Errorf("schema %s: no such source", file)
	}
	if ptr != "" {
		if !strings.HasPrefix(ptr, "/") {
			return nil, fmt.Errorf("schema %s#%s: not a JSON pointer", file, ptr)
		}
		for _, seg := range strings.Split(ptr[1:], "/") {
			m, _ := v.(map[string]any)
			seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
			if v, ok = m[seg]; !ok {
				return nil, fmt.Errorf("schema %s#%s: nothing there", file, ptr)
			}
		}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("schema %s#%s: not an object", file, ptr)
	}
	return m, nil
}

// def copies file#ptr into the result's $defs, once, and returns its name:
// the pointer's last segment, or the file's name for a whole file.
func (b *bundler) def(file, ptr string) (string, error) {
	key := file + "#" + ptr
	name := strings.TrimSuffix(file, ".json")
	if ptr != "" {
		if !strings.HasPrefix(ptr, "/$defs/") || strings.Count(ptr, "/") != 2 {
			return "", fmt.Errorf("schema %s: a $ref must name a whole file or one of its $defs", key)
		}
		name = ptr[len("/$defs/"):]
	}
	if prev, ok := b.from[name]; ok {
		if prev != key {
			return "", fmt.Errorf("schema %s and %s would both be bundled as $defs/%s", prev, key, name)
		}
		return name, nil
	}
	b.from[name] = key
	node, err := b.resolve(file, ptr)
	if err != nil {
		return "", err
	}
	out, err := b.rewrite(node, file)
	if err != nil {
		return "", err
	}
	copied := out.(map[string]any)
	for _, k := range []string{"$schema", "$id", "$defs"} {
		delete(copied, k)
	}
	b.defs[name] = copied
	return name, nil
}

// rewrite copies v, found in file, with each $ref pointed into the result.
func (b *bundler) rewrite(v any, file string) (any, error) {
	switch n := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(n))
		for k, sub := range n {
			if k == "$defs" {
				continue // copied where a $ref reaches them
			}
			if ref, ok := sub.(string); ok && k == "$ref" {
				target, err := b.ref(ref, file)
				if err != nil {
					return nil, err
				}
				out[k] = target
				continue
			}
			c, err := b.rewrite(sub, file)
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		return out, nil
	case []any:
		out := make([]any, len(n))
		for i, sub := range n {
			c, err := b.rewrite(sub, file)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	}
	return v, nil
}

// ref rewrites one $ref found in file.
func (b *bundler) ref(ref, file string) (string, error) {
	target, ptr, _ := strings.Cut(ref, "#")
	if target == "" {
		target = file
	}
	if target+"#"+ptr == b.root {
		return "#", nil
	}
	name, err := b.def(target, ptr)
	if err != nil {
		return "", err
	}
	return "#/$defs/" + name, nil
}

// encodeSchema writes a schema indented, without HTML escapes, with a
// final newline. Keys come in reading order: what the schema is first
// ($schema, $id, title, description, type), then the rest by name, its
// $defs last.
func encodeSchema(v any) ([]byte, error) {
	compact, err := appendSchema(nil, v)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, compact, "", "  "); err != nil {
		return nil, err
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// keyRank orders a schema's keys for reading.
func keyRank(k string) int {
	switch k {
	case "$schema":
		return 0
	case "$id":
		return 1
	case "title":
		return 2
	case "description":
		return 3
	case "type":
		return 4
	case "$defs":
		return 6
	}
	return 5
}

func appendSchema(b []byte, v any) ([]byte, error) {
	switch n := v.(type) {
	case map[string]any:
		keys := slices.SortedFunc(maps.Keys(n), func(x, y string) int {
			if c := keyRank(x) - keyRank(y); c != 0 {
				return c
			}
			return strings.Compare(x, y)
		})
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendSchema(b, k); err != nil {
				return nil, err
			}
			b = append(b, ':')
			if b, err = appendSchema(b, n[k]); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case []any:
		b = append(b, '[')
		for i, sub := range n {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendSchema(b, sub); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...), nil
}
