// Package secretfile reads secrets from other tools' file formats and writes
// them in some of those formats: the parsing half of `arca migrate` and the
// encoding half of `arca export`. It does no I/O beyond the reader or writer
// it is given and knows nothing of vaults or the CLI.
//
// Formats (see Formats):
//
//   - dotenv: NAME=value lines (Flat), by a parser written here. Libraries
//     such as godotenv expand $VAR and ${VAR} in values and keep the last of
//     two assignments to one name without a word; either would import a
//     value other than the one in the file. This parser expands nothing
//     ($HOME, ${X} and $(cmd) stay as written, and an entry with such a
//     reference is marked Refs) unless Options.Expand (expand.go).
//   - json: an object of name → value (Flat) or namespace → name → value
//     (Nested), what `sops -d` prints for a JSON file.
//   - yaml: the same two shapes in YAML, what `sops -d` prints for a YAML
//     file.
//   - vault-kv: what `vault kv get -format=json PATH` prints (KV v2 or v1).
//   - arenzana: the store.json of github.com/arenzana/arca (version 1), each
//     value decrypted with the age identities in Options.
//
// An input that sops encrypted (sopsEncrypted) is refused whole with
// ErrSopsEncrypted, in every format sops writes: decrypt it first.
//
// Every parser refuses, naming the line or the key path: a name (or
// namespace) that is not a valid segment (it is never changed to fit), a name
// set twice, a value that is not valid UTF-8 or is over manifest.MaxValue,
// more than MaxEntries entries, input over MaxInput. A leading UTF-8 byte
// order mark is dropped. Empty values are passed on: arca stores none, and
// the caller decides what to do with them.
//
// Errors are one line and never hold a value: they name the place (a line
// number, a key path) and may quote a name, written with strconv.QuoteToASCII
// (a name over manifest.MaxSegment bytes is given by its length only).
package secretfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"filippo.io/age"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops/ref"
	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/fsio"
)

// Entry is one secret read from a file.
type Entry struct {
	// NS is the namespace of a Nested input; "" for a Flat one, whose
	// namespace the caller supplies.
	NS string
	// Name is the secret's name, a valid segment.
	Name string
	// Value is the secret's value, valid UTF-8, at most manifest.MaxValue
	// bytes.
	Value vault.Secret
	// Where says where the entry was read, for messages: "line 12",
	// `key "db"`, `key "app"."db"`, `secret "db"`.
	Where string
	// Refs: the value holds a $NAME or ${NAME} that a dotenv reader
	// (python-dotenv, Docker Compose) would expand, and it was stored as
	// written (a dotenv input read without Options.Expand).
	Refs bool
}

// Shape is the shape of a parsed input.
type Shape int

const (
	// Flat is name → value; the entries' NS is "".
	Flat Shape = iota
	// Nested is namespace → name → value.
	Nested
)

// String is "flat" or "nested".
func (s Shape) String() string {
	if s == Nested {
		return "nested"
	}
	return "flat"
}

const (
	// MaxInput is the most bytes of input read; larger input is refused.
	MaxInput = 64 << 20
	// MaxYAMLInput is the most bytes of YAML parsed: its parser's node
	// tree costs up to some 40 times the input.
	MaxYAMLInput = 8 << 20
	// MaxEntries is the most entries one input may hold.
	MaxEntries = 100_000
)

// Options carries what some formats need beyond the bytes.
type Options struct {
	// Identities open the values of an arenzana store.
	Identities []age.Identity
	// Expand expands the $NAME and ${NAME} references of a dotenv input's
	// unquoted and double-quoted values (expand.go), each NAME an earlier
	// key of the file or else a variable Lookup finds.
	Expand bool
	Lookup func(name string) (string, bool)
}

// Formats returns the formats Parse reads.
func Formats() []string {
	return []string{"dotenv", "json", "yaml", "vault-kv", "arenzana", "sops-dotenv"}
}

// Read reads all of r, refusing more than MaxInput bytes (it reads at most
// MaxInput+1), and parses it as Parse does.
func Read(r io.Reader, format string, o Options) ([]Entry, Shape, error) {
	data, err := read(r)
	if err != nil {
		return nil, Flat, err
	}
	return Parse(data, format, o)
}

// ReadInput reads all of r as Read does, for ParseEach.
func ReadInput(r io.Reader) ([]byte, error) { return read(r) }

// SizeHint is how many entries to make room for to hold what data parses
// to: one a line, at most MaxEntries. It is exact for a dotenv file of
// assignments alone, and a guess for other inputs.
func SizeHint(data []byte) int { return min(bytes.Count(data, []byte("\n"))+1, MaxEntries) }

func read(r io.Reader) ([]byte, error) {
	data, err := fsio.Read(r, MaxInput)
	if errors.Is(err, fsio.ErrTooLarge) {
		return nil, tooLarge()
	}
	if err != nil {
		return nil, fmt.Errorf("reading the input: %v", err)
	}
	return data, nil
}

// Parse parses data as format, one of Formats. The entries come in input
// order; the Shape is Flat unless a json or yaml input is Nested. data is
// not kept: the values are copies.
func Parse(data []byte, format string, o Options) ([]Entry, Shape, error) {
	c := &collector{}
	shape, err := parse(data, format, o, c)
	if err != nil {
		return nil, Flat, err
	}
	return c.es, shape, nil
}

// ParseEach parses data as Parse does, but hands each entry to fn as it
// is read (for vault-kv: once the input is read) instead of collecting
// them, so a large input's entries are never held twice, once here and
// once as what fn makes of them. An entry's value is valid only during
// the call (it may be data's own bytes): fn keeps a copy. The whole input is still checked: an
// error after some entries were handed over means the input is refused,
// and what fn made of them is to be dropped. An error of fn stops the
// parse and is returned.
func ParseEach(data []byte, format string, o Options, fn func(Entry) error) (Shape, error) {
	return parse(data, format, o, &collector{emit: fn})
}

func parse(data []byte, format string, o Options, c *collector) (Shape, error) {
	if len(data) > MaxInput {
		return Flat, tooLarge()
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if format != "vault-kv" && format != "arenzana" && sopsEncrypted(data) {
		return Flat, ErrSopsEncrypted
	}
	if o.Expand && format != "dotenv" {
		return Flat, fmt.Errorf("expanding $NAME is for dotenv input only, not %s", format)
	}
	switch format {
	case "dotenv":
		return Flat, parseDotenv(data, o, c)
	case "json":
		return parseJSON(data, c)
	case "yaml":
		return parseYAML(data, c)
	case "vault-kv":
		return Flat, parseVaultKV(data, c)
	case "sops-dotenv":
		return Flat, parseSopsDotenv(data, c)
	case "arenzana":
		return Flat, parseArenzana(data, o, c)
	}
	return Flat, fmt.Errorf("unknown format %s (one of: %s)", quoteName(format), strings.Join(Formats(), ", "))
}

func tooLarge() error {
	return fmt.Errorf("the input is larger than %d bytes (64 MiB)", MaxInput)
}

// collector gathers entries, checking the bounds every format shares, or
// hands them on to emit.
type collector struct {
	es   []Entry
	n    int
	emit func(Entry) error // nil: gather them in es
}

// room makes room in es for the entries of data (see SizeHint), so that a large input's entries are allocated once rather
// than grown into.
func (c *collector) room(data []byte) {
	if c.emit == nil {
		c.es = slices.Grow(c.es, SizeHint(data))
	}
}

// putAll puts es, entries another collector gathered and checked.
func (c *collector) putAll(es []Entry) error {
	for _, e := range es {
		if err := c.put(e); err != nil {
			return err
		}
	}
	return nil
}

// put gathers or hands on e, counting it.
func (c *collector) put(e Entry) error {
	c.n++
	if c.emit != nil {
		return c.emit(e)
	}
	c.es = append(c.es, e)
	return nil
}

// add appends an entry of value (copied when gathered; handed on as it
// is). pos places it in an error ("line
// 4: DB", `line 4: key "app"."db"`), and is called only for one; where is
// the entry's Where. The name and namespace are checked by the caller,
// whose messages differ by format.
func (c *collector) add(ns, name string, value []byte, where string, pos func() string) error {
	return c.addRefs(ns, name, value, where, false, pos)
}

// addRefs is add, the entry's Refs set to refs.
func (c *collector) addRefs(ns, name string, value []byte, where string, refs bool, pos func() string) error {
	if c.n >= MaxEntries {
		return fmt.Errorf("%s: more than %d entries", pos(), MaxEntries)
	}
	if err := valueProblem(value); err != "" {
		return fmt.Errorf("%s: %s", pos(), err)
	}
	if c.emit == nil {
		value = bytes.Clone(value)
	}
	return c.put(Entry{NS: ns, Name: name, Value: vault.NewSecret(value), Where: where, Refs: refs})
}

// valueProblem describes what makes v a value no parser returns, or is "".
func valueProblem(v []byte) string {
	if len(v) > manifest.MaxValue {
		return fmt.Sprintf("the value is larger than %d bytes (64 KiB)", manifest.MaxValue)
	}
	if !utf8.Valid(v) {
		return "the value is not valid UTF-8"
	}
	return ""
}

// nameProblem is "" for a valid segment, else the rest of a sentence that
// starts with what the name is: `"MY KEY" is not a valid name: has a …`.
func nameProblem(name string) string {
	if p := ref.SegmentProblem(name); p != "" {
		return quoteName(name) + " is not a valid name: " + p
	}
	return ""
}

// quoteName writes a name for a message: Go-quoted in ASCII, or by its
// length when it is too long to be a name (a pasted value, perhaps).
func quoteName(s string) string {
	if len(s) > manifest.MaxSegment {
		return fmt.Sprintf("<%d bytes>", len(s))
	}
	return strconv.QuoteToASCII(s)
}

// keyPath writes a key path for a message and a Where: `key "app"."db"`.
func keyPath(keys ...string) string {
	var b strings.Builder
	b.WriteString("key ")
	for i, k := range keys {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(quoteName(k))
	}
	return b.String()
}
