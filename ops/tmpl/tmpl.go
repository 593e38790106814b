// Package tmpl parses and renders the templates `arca deploy` writes out:
// text files with secret refs in them. It knows nothing of vaults or files.
// Parse reads a template and names the refs in it; the caller resolves them
// all; Render writes the text with each ref's value in its place.
//
// The grammar, in bytes (ws is a space or a tab):
//
//	template = { text | action }
//	text     = any bytes but "{{"       ("}}" and a lone "{" are text)
//	action   = "{{" ws* body ws* "}}"   (all on one line)
//	body     = ref { ws* "|" ws* filter } | literal   (at most MaxFilters filters)
//	ref      = a word ref.Parse accepts: arca://ns/name or arca://env/ns/name
//	filter   = "base64" | "json" | "shell"
//	literal  = `"{{"` | `"}}"`
//	word     = 1 or more bytes but ws, newline and "|", ending before "}}"
//
// An action starts at the first "{{" and ends at the first "}}" after its
// body. It writes:
//
//   - a ref: the secret's value, byte for byte, as stored;
//   - | base64: its input in standard base64 with padding (RFC 4648 §4),
//     what a Kubernetes Secret's data field holds;
//   - | json: its input as a JSON string literal, quotes included, escaped
//     as encoding/json escapes it but with HTML escaping off (<, > and &
//     stay as they are; U+2028 and U+2029 are escaped, a byte that is not
//     UTF-8 is written \ufffd);
//   - | shell: its input as one POSIX-shell word in single quotes, each
//     ' in it written as four bytes (a quote that closes, a backslash and
//     a quote, a quote that reopens); an input holding a NUL is refused,
//     since no shell word can hold it;
//   - "{{" or "}}": those two bytes.
//
// The value it's <"a\b"> & more, through each filter:
//
//	{{ arca://db/pw }}           it's <"a\b"> & more
//	{{ arca://db/pw | base64 }}  aXQncyA8ImFcYiI+ICYgbW9yZQ==
//	{{ arca://db/pw | json }}    "it's <\"a\\b\"> & more"
//	{{ arca://db/pw | shell }}   'it'\''s <"a\b"> & more'
//
// Filters apply left to right, so `| base64 | json` writes the base64 of
// the value as a JSON string. A value is written once, as is: a "{{" in a
// value is never read as an action. There is nothing else to the
// language: no conditions, loops, variables or pipelines beyond these.
//
// json writes JSON, not YAML. A YAML parser reads most JSON strings as
// JSON does, but refuses one holding DEL, a C1 control or U+FFFE, and
// folds U+0085 into a space; in a YAML file, base64 (a Kubernetes Secret's
// data) carries every value.
//
// Every error of Parse is one line, NAME:LINE:COL: message, with LINE and
// COL 1-based, COL counted in bytes, at the "{{" that starts the action
// (for bytes that are not UTF-8, at the first such byte; a template over
// MaxTemplate is NAME: message). The first problem reading left to right
// is the one reported. Messages never quote the template's text, which
// may hold a value pasted where a ref should be, beyond a filter's name
// (an unknown one cut to 64 bytes and Go-quoted in printable ASCII) and
// the one character ref.Parse may name; Render's errors name the action
// and the ref, never a value.
package tmpl

import (
	"fmt"
	"slices"

	"github.com/arca-secrets/arca/ops/ref"
)

const (
	// MaxTemplate is the most bytes a template may have; a larger one is
	// refused.
	MaxTemplate = 1 << 20
	// MaxRefs is the most distinct refs one template may name.
	MaxRefs = 10_000
	// MaxFilters is the most filters one action may chain. Two are all a
	// use needs (| base64 | json); each can make its input several times
	// longer, and a long chain of them would cost seconds to refuse.
	MaxFilters = 8
	// MaxOutput is the most bytes Render writes; a template whose output
	// would be larger is refused before the bytes are built.
	MaxOutput = 64 << 20
)

// Template is a parsed template. It is not changed after Parse, so Refs
// and Render may be called from several goroutines at once.
type Template struct {
	name    string
	text    []byte    // the literal text, every text and "{{" "}}" literal, in order
	actions []action  // the ref actions, in order
	filters []filter  // every action's filters, each action's a run of them
	refs    []ref.Ref // distinct refs, in order of first appearance
}

// action is a ref action: the text before it, the ref and its filters.
type action struct {
	text      int // the end in Template.text of the text before the action
	ref       int // the index of the ref in Template.refs
	from, to  int // the action's filters are Template.filters[from:to]
	line, col int // where the action's "{{" is
}

// Name is the name given to Parse, which starts every error.
func (t *Template) Name() string { return t.name }

// Refs returns the distinct refs the template names, in order of first
// appearance, each as written: an env pin is kept (arca://prod/db/pw and
// arca://db/pw are two refs), since the caller decides routing. The slice
// is the caller's.
func (t *Template) Refs() []ref.Ref { return slices.Clone(t.refs) }

// refText writes r as it was written, pin included.
func refText(r ref.Ref) string {
	if r.Env != "" {
		return ref.Scheme + r.Env + "/" + r.Path()
	}
	return r.Canonical()
}

// Where is the position of the first action naming r, as Parse's errors
// give one: NAME:LINE:COL, LINE and COL 1-based at its "{{". ok is false
// when r is not one of Refs.
func (t *Template) Where(r ref.Ref) (pos string, ok bool) {
	for _, a := range t.actions {
		if t.refs[a.ref] == r {
			return fmt.Sprintf("%s:%d:%d", t.name, a.line, a.col), true
		}
	}
	return "", false
}
