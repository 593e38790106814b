package tmpl

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/arca-secrets/arca/ops/ref"
)

// parser reads one template.
type parser struct {
	t         *Template
	src       []byte
	pos       int            // the next byte of src to read
	line      int            // the line of src[pos], 1-based
	lineStart int            // the offset in src of that line's first byte
	seen      map[string]int // a ref's word → its index in t.refs
}

// Parse parses src by the grammar in the package doc. name, usually the
// file's path, starts every error: NAME:LINE:COL: message. src is not kept:
// the template holds a copy of its text. The messages:
//
//	{{ not closed                        the template ends inside an action
//	newline inside an action
//	empty action
//	expected a ref (arca://ns/name) or a quoted literal ("{{" or "}}")
//	invalid ref: …                       ref.Parse's message
//	unknown function "NAME"
//	expected a function after "|"
//	expected "|" or "}}" after the ref   (or after "json", …)
//	more than 8 functions in one action
//	a quoted literal must be "{{" or "}}"
//	a quoted literal takes no function
//	expected "}}" after the quoted literal
//	more than 10000 distinct refs
//	not valid UTF-8                      at the first such byte
//	the template is larger than 1048576 bytes (1 MiB)   NAME: only
func Parse(name string, src []byte) (*Template, error) {
	if len(src) > MaxTemplate {
		return nil, fmt.Errorf("%s: the template is larger than %d bytes (1 MiB)", name, MaxTemplate)
	}
	if !utf8.Valid(src) {
		line, col := position(src, invalidUTF8(src))
		return nil, fmt.Errorf("%s:%d:%d: not valid UTF-8", name, line, col)
	}
	// Sized for every "{{" an action: one allocation each, whatever the size.
	n := bytes.Count(src, []byte("{{"))
	t := &Template{name: name, text: make([]byte, 0, len(src)), actions: make([]action, 0, n), refs: make([]ref.Ref, 0, min(n, MaxRefs))}
	p := parser{t: t, src: src, line: 1, seen: make(map[string]int, min(n, MaxRefs))}
	for {
		i := bytes.Index(src[p.pos:], []byte("{{"))
		if i < 0 {
			p.text(len(src))
			return p.t, nil
		}
		p.text(p.pos + i)
		if err := p.action(); err != nil {
			return nil, err
		}
	}
}

// text takes src[pos:end] as text.
func (p *parser) text(end int) {
	b := p.src[p.pos:end]
	p.t.text = append(p.t.text, b...)
	if n := bytes.Count(b, []byte("\n")); n > 0 {
		p.line += n
		p.lineStart = p.pos + bytes.LastIndexByte(b, '\n') + 1
	}
	p.pos = end
}

// action reads the action whose "{{" is at pos.
func (p *parser) action() error {
	line, col := p.line, p.pos-p.lineStart+1
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s:%d:%d: %s", p.t.name, line, col, fmt.Sprintf(format, args...))
	}
	end := bytes.IndexByte(p.src[p.pos:], '\n')
	if end < 0 {
		end = len(p.src)
	} else {
		end += p.pos
	}
	c := cursor{b: p.src[:end], i: p.pos + 2}
	unclosed := func() error {
		if end < len(p.src) {
			return fail("newline inside an action")
		}
		return fail("{{ not closed")
	}
	c.skipWS()
	switch {
	case c.eol():
		return unclosed()
	case c.at("}}"):
		return fail("empty action")
	case c.at(`"`):
		return p.literal(&c, fail, unclosed)
	}
	w := c.word()
	if hasPrefixFold(w, "op://") {
		return fail("a 1Password reference (op://): convert it to arca://NS/NAME, its secret migrated into arca (see docs/migrate.md#from-1password)")
	}
	if !hasPrefixFold(w, "arca:") {
		return fail(`expected a ref (arca://ns/name) or a quoted literal ("{{" or "}}")`)
	}
	idx, err := p.ref(w)
	if err != nil {
		return fail("%v", err)
	}
	a := action{text: len(p.t.text), ref: idx, from: len(p.t.filters), line: line, col: col}
	var last []byte // the last filter's name
	for {
		c.skipWS()
		switch {
		case c.eol():
			return unclosed()
		case c.at("}}"):
			a.to = len(p.t.filters)
			p.t.actions = append(p.t.actions, a)
			p.pos = c.i + 2
			return nil
		case !c.at("|") && last == nil:
			return fail(`expected "|" or "}}" after the ref`)
		case !c.at("|"):
			return fail(`expected "|" or "}}" after %q`, last)
		}
		c.i++
		c.skipWS()
		if c.eol() {
			return unclosed()
		}
		name := c.word()
		if len(name) == 0 {
			return fail(`expected a function after "|"`)
		}
		f, ok := lookup(string(name))
		if !ok {
			return fail("unknown function %s", quoteName(name))
		}
		if len(p.t.filters)-a.from == MaxFilters {
			return fail("more than %d functions in one action", MaxFilters)
		}
		p.t.filters = append(p.t.filters, f)
		last = name
	}
}

// literal reads the quoted literal at the cursor, and the end of its action.
func (p *parser) literal(c *cursor, fail func(string, ...any) error, unclosed func() error) error {
	var lit string
	switch {
	case c.at(`"{{"`):
		lit = "{{"
	case c.at(`"}}"`):
		lit = "}}"
	default:
		return fail(`a quoted literal must be "{{" or "}}"`)
	}
	c.i += len(`"{{"`)
	c.skipWS()
	switch {
	case c.eol():
		return unclosed()
	case c.at("|"):
		return fail("a quoted literal takes no function")
	case !c.at("}}"):
		return fail(`expected "}}" after the quoted literal`)
	}
	p.t.text = append(p.t.text, lit...)
	p.pos = c.i + 2
	return nil
}

// ref parses w and returns its index in the template's refs, adding it
// when it is new.
func (p *parser) ref(w []byte) (int, error) {
	if i, ok := p.seen[string(w)]; ok {
		return i, nil
	}
	s := string(w)
	r, err := ref.Parse(s)
	if err != nil {
		return 0, err
	}
	if len(p.t.refs) == MaxRefs {
		return 0, fmt.Errorf("more than %d distinct refs", MaxRefs)
	}
	p.seen[s] = len(p.t.refs)
	p.t.refs = append(p.t.refs, r)
	return len(p.t.refs) - 1, nil
}

// hasPrefixFold reports whether w starts with prefix, in any case.
func hasPrefixFold(w []byte, prefix string) bool {
	return len(w) >= len(prefix) && strings.EqualFold(string(w[:len(prefix)]), prefix)
}

// quoteName writes a function's name for a message: its first 64 bytes (cut
// at a rune boundary), Go-quoted in printable ASCII.
func quoteName(name []byte) string {
	const max = 64
	if len(name) > max {
		n := max
		for n > 0 && !utf8.RuneStart(name[n]) {
			n--
		}
		name = name[:n]
	}
	return strconv.QuoteToASCII(string(name))
}

// invalidUTF8 returns the offset of the first byte of src that is not
// UTF-8; src must have one.
func invalidUTF8(src []byte) int {
	i := 0
	for i < len(src) {
		r, n := utf8.DecodeRune(src[i:])
		if r == utf8.RuneError && n == 1 {
			break
		}
		i += n
	}
	return i
}

// position returns the 1-based line and byte column of src[off].
func position(src []byte, off int) (line, col int) {
	before := src[:off]
	return bytes.Count(before, []byte("\n")) + 1, off - bytes.LastIndexByte(before, '\n')
}
