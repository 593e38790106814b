package secretfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/arca-secrets/arca/ops/ref"
)

// parseYAML reads one YAML document of the shapes parseJSON reads: a
// mapping of name → value (Flat) or of namespace → mapping of name → value
// (Nested), what `sops -d` prints for a YAML file. A value is a scalar's
// text as written (node.Value): `port: 5432` is "5432", a | block keeps its
// newlines as YAML defines. Refused, naming the line: anchors, aliases and
// merge keys (<<), tags other than str, int, bool, float and timestamp (a
// !!binary value's text is not its value), null, sequences, keys that are
// not scalars, a key set twice and a second document. An input with no
// document (empty, or only comments) is Flat with no entries.
//
// go.yaml.in/yaml/v3 builds the whole node tree before it is walked, at a
// cost per node, not per byte: 100,000 short entries take about a second,
// 60 MiB of large block scalars about as long, but MaxInput bytes of one
// short key a line (some 9 million nodes) about 15 s and 2.5 GB before the
// entry bound refuses it. So YAML input has a bound of its own,
// MaxYAMLInput, an eighth of MaxInput.
func parseYAML(data []byte, c *collector) (Shape, error) {
	if len(data) > MaxYAMLInput {
		return Flat, fmt.Errorf("the input is larger than %d bytes (8 MiB), the most YAML arca parses: convert it to JSON (yq -o=json) and migrate that", MaxYAMLInput)
	}
	if err := yamlCheckText(data); err != nil {
		return Flat, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err == io.EOF {
		return Flat, nil
	} else if err != nil {
		return Flat, yamlError(err)
	}
	var next yaml.Node
	if err := dec.Decode(&next); err == nil {
		return Flat, fmt.Errorf("line %d: a second document (want one)", next.Line)
	} else if err != io.EOF {
		return Flat, yamlError(err)
	}
	root := doc.Content[0] // a document node holds its one root
	if root.Kind != yaml.MappingNode {
		if err := yamlPlain(root, nil); err != nil {
			return Flat, err
		}
		return Flat, fmt.Errorf("line %d: the top level is %s (want a mapping)", root.Line, yamlKind(root))
	}
	var (
		shape   Shape
		decided bool
	)
	err := yamlMapping(root, nil, func(key string, k, v *yaml.Node) error {
		s := Flat
		if v.Kind == yaml.MappingNode {
			s = Nested
		}
		if !decided {
			shape, decided = s, true
		} else if s != shape {
			return mixedShapes(k.Line, []string{key}, yamlKind(v), shape)
		}
		if shape == Flat {
			return yamlLeaf(c, "", key, k, v)
		}
		if p := ref.SegmentProblem(key); p != "" {
			return fmt.Errorf("line %d: %s is not a valid namespace: %s", k.Line, keyPath(key), p)
		}
		return yamlMapping(v, []string{key}, func(name string, k, v *yaml.Node) error {
			if v.Kind == yaml.MappingNode {
				return fmt.Errorf("line %d: %s is a mapping (want a string: the nesting is namespace, name, value)", k.Line, keyPath(key, name))
			}
			return yamlLeaf(c, key, name, k, v)
		})
	})
	if err != nil {
		return Flat, err
	}
	return shape, nil
}

// yamlMapping calls fn for each key and value of mapping m (at key path
// path), refusing what the package doc says, and a key set twice.
func yamlMapping(m *yaml.Node, path []string, fn func(key string, k, v *yaml.Node) error) error {
	if err := yamlPlain(m, path); err != nil {
		return err
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			return fmt.Errorf("line %d: a merge key (<<) (want plain keys)", k.Line)
		}
		if k.Kind != yaml.ScalarNode {
			return fmt.Errorf("line %d: a key that is %s (want a plain key)", k.Line, yamlKind(k))
		}
		kpath := append(append([]string(nil), path...), k.Value)
		if err := yamlPlain(k, kpath); err != nil {
			return err
		}
		if first, ok := seen[k.Value]; ok {
			return fmt.Errorf("line %d: %s is also set on line %d", k.Line, keyPath(kpath...), first)
		}
		seen[k.Value] = k.Line
		if err := yamlPlain(v, kpath); err != nil {
			return err
		}
		if err := fn(k.Value, k, v); err != nil {
			return err
		}
	}
	return nil
}

// yamlPlain refuses an alias, an anchor and a tag the package doc does not
// allow on node n.
func yamlPlain(n *yaml.Node, path []string) error {
	at := ""
	if len(path) > 0 {
		at = keyPath(path...) + ": "
	}
	switch {
	case n.Kind == yaml.AliasNode:
		return fmt.Errorf("line %d: %san alias (*%s) (want the value written out)", n.Line, at, yamlAnchorName(n.Value))
	case n.Anchor != "":
		return fmt.Errorf("line %d: %san anchor (&%s) (want no anchors)", n.Line, at, yamlAnchorName(n.Anchor))
	}
	switch n.ShortTag() {
	case "!!str", "!!int", "!!bool", "!!float", "!!timestamp", "!!null", "!!map", "!!seq", "!!merge":
		return nil
	}
	return fmt.Errorf("line %d: %sa value tagged %s (want no tag, or !!str)", n.Line, at, quoteName(n.ShortTag()))
}

// yamlLeaf adds the secret ns/name whose key is k and value v.
func yamlLeaf(c *collector, ns, name string, k, v *yaml.Node) error {
	path := []string{name}
	if ns != "" {
		path = []string{ns, name}
	}
	if err := checkName(k.Line, path); err != nil {
		return err
	}
	where := keyPath(path...)
	if v.Kind != yaml.ScalarNode || v.ShortTag() == "!!null" {
		return fmt.Errorf("line %d: %s is %s (want a string)", k.Line, where, yamlKind(v))
	}
	return c.add(ns, name, []byte(v.Value), where, func() string { return fmt.Sprintf("line %d: %s", k.Line, where) })
}

// yamlKind names the kind of node n, for messages.
func yamlKind(n *yaml.Node) string {
	switch {
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a sequence"
	case n.Kind == yaml.AliasNode:
		return "an alias"
	case n.ShortTag() == "!!null":
		return "null"
	}
	return "a scalar"
}

// yamlAnchorName is an anchor's name for a message, or "..." for one that
// is long or odd.
func yamlAnchorName(s string) string {
	if len(s) > 32 || !ref.ValidSegment(s) {
		return "..."
	}
	return s
}

var yamlLine = regexp.MustCompile(`^line (\d+): `)

// yamlParserProblem reports whether msg is one of the problems that
// go.yaml.in/yaml/v3's parser (not its scanner) reports. The parser gives
// their line 0-based, and none on the first line; its scanner's lines are
// 1-based.
func yamlParserProblem(msg string) bool {
	switch msg {
	case "did not find expected <document start>",
		"did not find expected <stream-start>",
		"found duplicate %TAG directive",
		"found duplicate %YAML directive",
		"found incompatible YAML document",
		"did not find expected node content",
		"did not find expected '-' indicator",
		"did not find expected key",
		"did not find expected ',' or '}'",
		"did not find expected ',' or ']'",
		"found undefined tag handle":
		return true
	}
	return false
}

// yamlError rewrites a go.yaml.in/yaml error as "line N: not valid YAML:
// problem", the line 1-based.
func yamlError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if strings.HasPrefix(msg, "unknown anchor ") {
		// The name after the * may be a value that was meant as text.
		return errors.New("not valid YAML: an alias (*) to an anchor that is not defined")
	}
	line := 0
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = msg[len(m[0]):]
		if yamlParserProblem(msg) {
			line++
		}
	} else if yamlParserProblem(msg) || strings.HasPrefix(msg, "found ") || strings.HasPrefix(msg, "did not find ") ||
		strings.HasPrefix(msg, "could not find ") || strings.HasSuffix(msg, " not allowed in this context") {
		line = 1 // a position on the first line is given as none
	}
	if line == 0 {
		return fmt.Errorf("not valid YAML: %s", msg)
	}
	return fmt.Errorf("line %d: not valid YAML: %s", line, msg)
}

// yamlCheckText refuses what YAML does not allow in a stream: text that is
// not UTF-8, and a control character other than tab, LF, CR and NEL.
func yamlCheckText(data []byte) error {
	if err := checkUTF8(data); err != nil {
		return err
	}
	for i, r := range string(data) {
		switch {
		case r == '\t', r == '\n', r == '\r', r >= 0x20 && r <= 0x7e, r == 0x85,
			r >= 0xa0 && r <= 0xd7ff, r >= 0xe000 && r <= 0xfffd, r >= 0x10000:
		default:
			return fmt.Errorf("line %d: a control character (YAML allows tab, LF and CR only)", lineOf(data, int64(i)))
		}
	}
	return nil
}
