package manifest

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
)

// The sources of the published schemas. They share parts by relative
// $refs; what is published is bundled from them (bundle.go).
//
//go:embed schemas/*.json
var schemaFiles embed.FS

// SchemaPrefix begins the $id of every published schema; the name follows.
const SchemaPrefix = "urn:arca-serve:1:"

// SchemaNames lists the published schemas: request, response, error,
// result (every op's result under $defs by op name), event, and each op's
// result on its own as "result.OP".
func SchemaNames() []string {
	names := []string{"request", "response", "error", "result", "event"}
	for _, op := range Ops() {
		names = append(names, "result."+op.Name)
	}
	return names
}

// Schema returns the published schema name: standalone (it validates with
// no other schema loaded), with the $id SchemaPrefix+name, indented.
func Schema(name string) ([]byte, error) {
	sources, err := schemaSources()
	if err != nil {
		return nil, err
	}
	doc, err := standalone(sources, name)
	if err != nil {
		return nil, err
	}
	return encodeSchema(doc)
}

// Schemas returns every published schema keyed by its name, bundled from
// one reading of the sources.
func Schemas() (map[string]json.RawMessage, error) {
	sources, err := schemaSources()
	if err != nil {
		return nil, err
	}
	out := map[string]json.RawMessage{}
	for _, n := range SchemaNames() {
		doc, err := standalone(sources, n)
		if err == nil {
			out[n], err = encodeSchema(doc)
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ClosedSchema returns the published schema name with every object that
// lists its properties closed to others: what this build writes, exactly.
// The published schemas are open to added fields, as the versioning rule
// asks of clients; a conformance test holds a build to the closed form.
func ClosedSchema(name string) ([]byte, error) {
	sources, err := schemaSources()
	if err != nil {
		return nil, err
	}
	doc, err := standalone(sources, name)
	if err != nil {
		return nil, err
	}
	closeObjects(doc)
	return encodeSchema(doc)
}

// closeObjects sets additionalProperties false on every object schema
// under v that has properties and says nothing of others.
func closeObjects(v any) {
	switch n := v.(type) {
	case map[string]any:
		_, props := n["properties"].(map[string]any)
		_, said := n["additionalProperties"]
		if n["type"] == "object" && props && !said {
			n["additionalProperties"] = false
		}
		for _, sub := range n {
			closeObjects(sub)
		}
	case []any:
		for _, sub := range n {
			closeObjects(sub)
		}
	}
}

// standalone bundles the published schema name from the decoded sources,
// which it does not change.
func standalone(sources map[string]any, name string) (map[string]any, error) {
	file, ptr, ok := schemaSource(name)
	if !ok {
		return nil, fmt.Errorf("no schema %q (one of: %s)", name, strings.Join(SchemaNames(), ", "))
	}
	doc, err := bundle(sources, file, ptr)
	if err != nil {
		return nil, err
	}
	doc["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	doc["$id"] = SchemaPrefix + name
	if _, ok := doc["title"]; !ok {
		doc["title"] = "arca serve result of " + strings.TrimPrefix(name, "result.")
	}
	return doc, nil
}

// schemaSource says which source, and where in it, name is published from.
func schemaSource(name string) (file, ptr string, ok bool) {
	if op, isResult := strings.CutPrefix(name, "result."); isResult {
		if _, known := Op(op); known {
			return "result.json", "/$defs/" + op, true
		}
		return "", "", false
	}
	switch name {
	case "request", "response", "error", "result", "event":
		return name + ".json", "", true
	}
	return "", "", false
}

// schemaSources decodes the embedded sources, numbers kept as written, and
// fills in what they take from the op and request field tables (fromOps).
func schemaSources() (map[string]any, error) {
	entries, err := fs.ReadDir(schemaFiles, "schemas")
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for _, e := range entries {
		b, err := fs.ReadFile(schemaFiles, "schemas/"+e.Name())
		if err != nil {
			return nil, err
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("schema source %s: %w", e.Name(), err)
		}
		if err := fillFromOps(v, Ops(), RequestFields()); err != nil {
			return nil, fmt.Errorf("schema source %s: %w", e.Name(), err)
		}
		out[e.Name()] = v
	}
	return out, nil
}

// EventNames is every value an audit event's op, or its event when it has
// no op, can hold: the event schema's enum of event (the op table's ops,
// then the events that have none), what `arca audit --op` picks by.
func EventNames() []string {
	var s struct {
		Properties struct {
			Event struct{ Enum []string }
		}
	}
	if b, err := Schema("event"); err == nil {
		_ = json.Unmarshal(b, &s)
	}
	return s.Properties.Event.Enum
}

// CheckEventName refuses op when it is no value of EventNames, naming them.
func CheckEventName(op string) error {
	if op == "" {
		return nil // no --op: nothing to check, and no schema to read
	}
	names := EventNames()
	if slices.Contains(names, op) {
		return nil
	}
	return fmt.Errorf("--op %s is no op or event arca writes (%s)", strconv.QuoteToASCII(op), strings.Join(names, ", "))
}
