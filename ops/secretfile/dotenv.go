package secretfile

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"github.com/arca-secrets/arca/ops/ref"
)

// The dotenv grammar read by parseDotenv, one assignment per line:
//
//   - Blank lines and lines whose first non-blank character is # are skipped.
//   - An assignment is [export ]NAME=VALUE, with optional spaces or tabs
//     around the =. NAME is everything before the first =, trimmed, and must
//     be a valid segment. A name that is not is never quoted in the error:
//     it may be part of a value (a line of a value split over lines, a
//     line of another format).
//   - An unquoted VALUE runs to the end of the line and is trimmed; a #
//     after a space or tab starts a comment (KEY=a#b is "a#b"). One that
//     starts with = is refused: it is the padding line of a base64 value
//     split over lines, not a value.
//   - A VALUE in single quotes is taken literally, newlines included, up
//     to the next single quote.
//   - A VALUE in double quotes may span lines and decodes \n \r \t \" \\
//     \$ and \`; any other backslash pair stays as its two characters, so
//     C:\Users survives.
//   - After a closing quote only spaces, tabs and a comment may follow.
//   - Nothing is expanded: $HOME, ${X} and $(cmd) stay as written, unless
//     Options.Expand (expand.go); without it, an entry whose value holds a
//     reference a dotenv reader would expand is marked Refs.
//   - A CR before a LF belongs to the line ending, inside quotes too.
type dotenvParser struct {
	data []byte
	i    int   // the next byte
	line int   // the line of data[i]
	lit  []int // offsets in the last double-quoted value of the $ that \$ wrote
}

func parseDotenv(data []byte, o Options, c *collector) error {
	p := dotenvParser{data: data, line: 1}
	var x *expander
	if o.Expand {
		x = &expander{lookup: o.Lookup, earlier: map[string]string{}}
	}
	c.room(data)
	names := make([]dotenvName, 0, SizeHint(data))
	for p.i < len(p.data) {
		p.skipBlanks()
		if p.atEOL() {
			p.skipEOL()
			continue
		}
		if p.data[p.i] == '#' {
			p.skipLine()
			p.skipEOL()
			continue
		}
		line := p.line
		name, at, value, quote, err := p.assignment()
		if err != nil {
			return err
		}
		names = append(names, dotenvName{int32(at), int32(at + len(name)), int32(line)})
		where := "line " + strconv.Itoa(line)
		pos := func() string { return where + ": " + name }
		refs := false
		s := refScan{v: value, lit: p.lit, unquoted: quote == 0}
		switch {
		case quote == '\'' && x != nil:
			x.literal(name, value)
		case quote == '\'':
		case x != nil:
			if value, err = x.expand(name, s); err != nil {
				return fmt.Errorf("%s: %v", pos(), err)
			}
		default:
			refs = refsIn(s)
		}
		if err := c.addRefs("", name, value, where, refs, pos); err != nil {
			return err
		}
	}
	return dotenvTwice(data, names)
}

// dotenvName is where a name is set: its bytes in the input and its line.
// The names of a large file are checked for one set twice once it is read,
// by sorting these, which costs a fraction of a map of the names.
type dotenvName struct{ off, end, line int32 }

// dotenvTwice refuses a name set on two lines: of the names set more than
// once, the one whose second setting comes first, as a reader going down
// the file meets it.
func dotenvTwice(data []byte, names []dotenvName) error {
	key := func(n dotenvName) []byte { return data[n.off:n.end] }
	slices.SortFunc(names, func(a, b dotenvName) int {
		if c := bytes.Compare(key(a), key(b)); c != 0 {
			return c
		}
		return cmp.Compare(a.line, b.line)
	})
	var first, again *dotenvName
	for g, i := 0, 1; i < len(names); i++ {
		if !bytes.Equal(key(names[i]), key(names[g])) {
			g = i
			continue
		}
		if i == g+1 && (again == nil || names[i].line < again.line) {
			first, again = &names[g], &names[i]
		}
	}
	if again != nil {
		return fmt.Errorf("line %d: %s is also set on line %d", again.line, key(*again), first.line)
	}
	return nil
}

// assignment reads one NAME=VALUE, the parser at its first non-blank byte,
// through the end of its last line; at is where the name starts in the
// input, quote the value's quote (0 when unquoted).
func (p *dotenvParser) assignment() (name string, at int, value []byte, quote byte, err error) {
	line := p.line
	whole := p.data[p.i:]
	if nl := bytes.IndexByte(whole, '\n'); nl >= 0 {
		whole = whole[:nl]
	}
	rest := whole
	if after, ok := bytes.CutPrefix(rest, []byte("export")); ok && len(after) > 0 && isBlank(after[0]) {
		rest = bytes.TrimLeft(after, " \t")
	}
	eq := bytes.IndexByte(rest, '=')
	if eq < 0 {
		return "", 0, nil, 0, fmt.Errorf("line %d: not an assignment NAME=value, a comment or a blank line", line)
	}
	name = string(bytes.TrimRight(rest[:eq], " \t"))
	at = p.i + len(whole) - len(rest)
	if prob := ref.SegmentProblem(name); prob != "" {
		// What comes before the first = of a line may be a value: a line of
		// a value split over lines, a line of another format. It is never
		// quoted, only what is wrong with it.
		return "", 0, nil, 0, fmt.Errorf("line %d: the name before = is not a valid name: %s", line, prob)
	}
	p.i += len(whole) - len(rest) + eq + 1 // past the =
	p.skipBlanks()
	p.lit = p.lit[:0]
	switch {
	case p.i < len(p.data) && p.data[p.i] == '\'':
		quote = '\''
		value, err = p.quoted(quote, name)
	case p.i < len(p.data) && p.data[p.i] == '"':
		quote = '"'
		value, err = p.quoted(quote, name)
	default:
		v := p.unquoted()
		if len(v) > 0 && v[0] == '=' {
			// KEY==… is what a value split over lines unquoted looks like
			// on its padding line: refused, not guessed at.
			return "", 0, nil, 0, fmt.Errorf("line %d: %s: the value starts with = (is a value split over lines? quote a value that spans lines)", line, name)
		}
		return name, at, v, 0, nil
	}
	if err != nil {
		return "", 0, nil, 0, err
	}
	p.skipBlanks()
	if p.i < len(p.data) && p.data[p.i] == '#' {
		p.skipLine()
	}
	if !p.atEOL() {
		return "", 0, nil, 0, fmt.Errorf("line %d: %s: text after the closing quote (only a # comment may follow)", p.line, name)
	}
	p.skipEOL()
	return name, at, value, quote, nil
}

// unquoted reads a value to the end of the line, and the line ending.
func (p *dotenvParser) unquoted() []byte {
	start := p.i
	p.skipLine()
	v := p.data[start:p.i]
	for j := range v { // start > 0: it is past the =
		if v[j] == '#' && isBlank(p.data[start+j-1]) {
			v = v[:j]
			break
		}
	}
	p.skipEOL()
	return bytes.TrimRight(v, " \t\r")
}

// quoted reads the value of name in quotes q, the parser at the opening
// quote, and leaves it past the closing one. A value with nothing to
// unescape (no backslash in double quotes, no CR) is the input's own bytes.
func (p *dotenvParser) quoted(q byte, name string) ([]byte, error) {
	line := p.line
	p.i++
	if j := bytes.IndexByte(p.data[p.i:], q); j >= 0 {
		v := p.data[p.i : p.i+j]
		if bytes.IndexByte(v, '\r') < 0 && (q == '\'' || bytes.IndexByte(v, '\\') < 0) {
			p.line += bytes.Count(v, []byte("\n"))
			p.i += j + 1
			return v, nil
		}
	}
	var v []byte
	for p.i < len(p.data) {
		c := p.data[p.i]
		switch {
		case c == q:
			p.i++
			return v, nil
		case c == '\r' && p.i+1 < len(p.data) && p.data[p.i+1] == '\n':
			p.i++ // the LF is taken next
			continue
		case c == '\n':
			p.line++
		case c == '\\' && q == '"' && p.i+1 < len(p.data):
			if d, ok := dotenvEscape(p.data[p.i+1]); ok {
				if d == '$' {
					p.lit = append(p.lit, len(v))
				}
				v = append(v, d)
				p.i += 2
				continue
			}
		}
		v = append(v, c)
		p.i++
	}
	kind := "single"
	if q == '"' {
		kind = "double"
	}
	return nil, fmt.Errorf("line %d: %s: the %s quote opened on line %d is not closed", line, name, kind, line)
}

// dotenvEscape decodes the byte after a backslash in double quotes.
func dotenvEscape(c byte) (byte, bool) {
	switch c {
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	case '"', '\\', '$', '`':
		return c, true
	}
	return 0, false
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

func (p *dotenvParser) skipBlanks() {
	for p.i < len(p.data) && isBlank(p.data[p.i]) {
		p.i++
	}
}

// atEOL reports whether the parser is at a line ending (LF, CRLF, a CR
// that ends the input) or the end.
func (p *dotenvParser) atEOL() bool {
	rest := p.data[p.i:]
	return len(rest) == 0 || rest[0] == '\n' || rest[0] == '\r' && (len(rest) == 1 || rest[1] == '\n')
}

// skipLine moves to the LF that ends the line (or the end).
func (p *dotenvParser) skipLine() {
	if nl := bytes.IndexByte(p.data[p.i:], '\n'); nl >= 0 {
		p.i += nl
	} else {
		p.i = len(p.data)
	}
	if p.i > 0 && p.data[p.i-1] == '\r' && (p.i == len(p.data) || p.data[p.i] == '\n') {
		p.i-- // leave the CRLF to skipEOL
	}
}

// skipEOL moves past the line ending at the parser, if any.
func (p *dotenvParser) skipEOL() {
	if p.i < len(p.data) && p.data[p.i] == '\r' {
		p.i++
	}
	if p.i < len(p.data) && p.data[p.i] == '\n' {
		p.i++
		p.line++
	}
}
