// Package trail reads audit trails: the CLI's audit file and captured
// serve wires. It verifies their chains, and filters and follows their
// events. It reads a line at a time, each bounded by audit.MaxLine, so a
// huge or hostile file costs a line of memory, never the file.
package trail

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/internal/ndjson"
)

// Anchor pins a trail up to one of its lines: recorded somewhere the
// trail's writer cannot reach, it later shows whether the trail still
// holds those lines as they were. Line is the line's number, from 1;
// Digest commits to every line up to it and to where each stream (a
// serve process's, in a file of captured wires) begins.
//
// Digest is the link of that line (the SHA-256 of its bytes, in hex) while
// the line is in the trail's first stream: its chain already commits to
// every line before it. In a later stream it is the SHA-256 of
// anchorLabel, the digest of the line ending the stream before, and the
// link: a stream's start carries no link to what precedes it, so the
// digest carries it. An anchor of a trail of one stream from seq 1 (an
// audit file, one serve session) is therefore SEQ:LINK of its last event,
// what an older arca printed.
type Anchor struct {
	Line   uint64
	Digest string
}

// anchorLabel begins what is hashed into the digest of a line past the
// first stream, so it is never the link of any line.
const anchorLabel = "arca audit anchor, stream after stream\n"

// String is "LINE:DIGEST", what ParseAnchor reads.
func (a Anchor) String() string { return strconv.FormatUint(a.Line, 10) + ":" + a.Digest }

// ParseAnchor reads "LINE:DIGEST".
func ParseAnchor(s string) (Anchor, error) {
	line, digest, ok := strings.Cut(s, ":")
	n, err := strconv.ParseUint(line, 10, 64)
	if !ok || err != nil || n == 0 || !isLink(digest) {
		return Anchor{}, errors.New("an anchor is LINE:DIGEST, the number of a line of the trail and 64 lowercase hex digits (arca audit anchor prints one)")
	}
	return Anchor{Line: n, Digest: digest}, nil
}

// Result is what Verify found in a trail whose chain held.
type Result struct {
	Lines   int
	Streams int    // the processes whose events it holds (a serve wire may hold several; an audit file is one)
	First   uint64 // the seq of its first event
	LastSeq uint64 // the seq of its last event
	Last    Anchor // the anchor of its last line: the one to record elsewhere
	// MidChain is set when the first event links to one the trail does
	// not hold: the lines before it were removed, or the file rotated.
	MidChain bool
}

// Break is where a trail's chain does not hold.
type Break struct {
	Line   int
	Reason string
}

func (b *Break) Error() string { return fmt.Sprintf("line %d: %s", b.Line, b.Reason) }

// Verify reads a trail and checks its chain: every event links to the
// line before it (its exact bytes) and takes the next seq; a new stream
// (a serve process's, in a captured wire) begins only at a start event of
// seq 1. It reports the first line that breaks the chain as a *Break.
// With an anchor, the trail must hold the anchor's line with the anchor's
// digest: that catches a trail cut short, rewritten whole, or with a whole
// stream cut, added or moved before that line. Lines appended after it
// are checked for their chain only.
func Verify(r io.Reader, anchor *Anchor) (Result, error) {
	var c checker
	if anchor != nil {
		c.anchor = anchor
		hex.Decode(c.anchorDigest[:], []byte(anchor.Digest)) // ParseAnchor checked it
	}
	lr := newLineReader(r)
	for {
		line, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return c.result(), c.firstBreak(&Break{c.lines + 1, err.Error()})
		}
		if err := c.step(line); err != nil {
			return c.result(), err
		}
	}
	return c.result(), c.end()
}

// checker checks a trail's chain a line at a time.
type checker struct {
	lines, streams int
	first, prevSeq uint64
	prevLink       [sha256.Size]byte
	before         [sha256.Size]byte // the digest of the line before the current stream, from the second stream on
	midChain       bool
	anchor         *Anchor
	anchorDigest   [sha256.Size]byte
	anchored       bool
	missed         *Break // the anchor's line, when it does not match
	older          string // where the anchor is an older arca's SEQ:LINK, when missed
}

// step checks the next line (without its newline).
func (c *checker) step(line []byte) error { return c.stepLink(line, sha256.Sum256(line)) }

// stepLink is step of a line whose SHA-256 is link.
func (c *checker) stepLink(line []byte, link [sha256.Size]byte) error {
	ev, ok := parseLine(line)
	return c.stepParsed(line, link, ev, ok)
}

// stepParsed is step of a line whose SHA-256 is link and whose parseLine
// is ev, ok.
func (c *checker) stepParsed(line []byte, link [sha256.Size]byte, ev lineFacts, ok bool) error {
	n := c.lines + 1
	if !ok {
		return c.firstBreak(&Break{n, "not an audit event as arca writes one"})
	}
	switch {
	case n == 1:
		c.streams, c.first, c.midChain = 1, ev.seq, ev.prev != nil
	case ev.prev == nil && ev.source != audit.SourceCLI && ev.event == "start" && ev.seq == 1:
		c.before = c.digest()
		c.streams++
	case ev.prev == nil:
		return c.firstBreak(&Break{n, fmt.Sprintf("the chain is cut here: seq %d has no link to line %d", ev.seq, n-1)})
	case *ev.prev != c.prevLink:
		return c.firstBreak(&Break{n, fmt.Sprintf("seq %d does not link to line %d: a line was edited, removed, inserted or moved here", ev.seq, n-1)})
	case ev.seq != c.prevSeq+1:
		return c.firstBreak(&Break{n, fmt.Sprintf("seq %d follows seq %d (want %d)", ev.seq, c.prevSeq, c.prevSeq+1)})
	}
	c.prevLink, c.prevSeq, c.lines = link, ev.seq, n
	if c.anchor == nil {
		return nil
	}
	if uint64(n) == c.anchor.Line {
		if c.digest() == c.anchorDigest {
			c.anchored = true
		} else {
			c.missed = &Break{n, fmt.Sprintf("line %d (%s) does not match the anchor: the trail was rewritten, or lines or whole serve sessions before it were cut, added or moved", n, c.where(ev.seq))}
		}
	}
	if ev.seq == c.anchor.Line && c.prevLink == c.anchorDigest && uint64(n) != c.anchor.Line && c.older == "" {
		c.older = fmt.Sprintf("the anchor is the link of line %d (%s): an anchor as an older arca printed it, SEQ:LINK, which vouches for its own stream alone; arca audit anchor prints one that covers the whole trail", n, c.where(ev.seq))
	}
	return nil
}

// where names seq in the current stream, for a message.
func (c *checker) where(seq uint64) string {
	if c.streams > 1 {
		return fmt.Sprintf("seq %d of serve process %d", seq, c.streams)
	}
	return fmt.Sprintf("seq %d", seq)
}

// digest is the anchor digest of the last line checked (see Anchor).
func (c *checker) digest() [sha256.Size]byte {
	if c.streams <= 1 {
		return c.prevLink
	}
	h := sha256.New()
	h.Write([]byte(anchorLabel))
	h.Write(c.before[:])
	h.Write(c.prevLink[:])
	var d [sha256.Size]byte
	h.Sum(d[:0])
	return d
}

// firstBreak is b, or the anchor's line when it broke earlier.
func (c *checker) firstBreak(b *Break) *Break {
	if c.missed != nil {
		return c.missed
	}
	return b
}

// end checks what only the end of the trail tells: that it held the
// anchor, and whether an older arca's anchor explains why not.
func (c *checker) end() error {
	var b *Break
	switch {
	case c.anchor == nil || c.anchored:
		return nil
	case c.missed != nil:
		b = c.missed
	default:
		b = &Break{c.lines, fmt.Sprintf("the anchor's line %d is not in the trail, which ends at line %d: it was cut short, or rewritten", c.anchor.Line, c.lines)}
	}
	if c.older != "" {
		b.Reason += "; " + c.older
	}
	return b
}

// result is what the lines checked so far make.
func (c *checker) result() Result {
	res := Result{Lines: c.lines, Streams: c.streams, First: c.first, MidChain: c.midChain}
	if c.lines > 0 {
		d := c.digest()
		res.LastSeq, res.Last = c.prevSeq, Anchor{Line: uint64(c.lines), Digest: hex.EncodeToString(d[:])}
	}
	return res
}

// The errors of lineReader.next.
var (
	errLong = fmt.Errorf("longer than %d bytes: not an audit event", audit.MaxLine)
	errCut  = errors.New("the trail ends in the middle of this line: it was cut short, or is still being written")
)

// lineReader reads lines of at most audit.MaxLine bytes, and nothing past
// a longer one (ndjson.Fail).
type lineReader struct{ r *ndjson.Reader }

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{ndjson.NewReader(r, audit.MaxLine, ndjson.Fail)}
}

// next returns the next line without its newline, valid until the next
// call; io.EOF at the end. A last line with no newline, or one over
// audit.MaxLine, is an error.
func (l *lineReader) next() ([]byte, error) {
	line, err := l.r.Next()
	switch {
	case errors.Is(err, ndjson.ErrTooLong):
		return nil, errLong
	case errors.Is(err, ndjson.ErrCut):
		return nil, errCut
	}
	return line, err
}

// lineFacts is what the chain needs of a line.
type lineFacts struct {
	seq    uint64
	event  string
	source string
	prev   *[sha256.Size]byte // nil: the line has no link
}

// parseLine reads the facts of a line in the layout arca writes: `{"v":1,
// "ts":…,"seq":N,"event":"E",…,"source":"S"}`, with `,"prev":"LINK"`
// before the closing brace when it has a link. Any other line is refused:
// the chain is over arca's own lines, and a line in another layout is not
// one.
//
// A quote inside a JSON string is escaped, so `"source":"` appears in a
// line once, as its own key, unless the request id (any JSON value, as the
// client sent it) holds that key too: a line where it appears more than
// once must be one valid JSON value, which two events run together on one
// line are not.
func parseLine(line []byte) (lineFacts, bool) {
	var f lineFacts
	if !bytes.HasPrefix(line, []byte(`{"v":1,"ts":"`)) || !bytes.HasSuffix(line, []byte("}")) {
		return f, false
	}
	if n := bytes.Count(line, []byte(`"source":"`)); n == 0 || n > 1 && !json.Valid(line) {
		return f, false
	}
	if f.seq = audit.SeqOf(line); f.seq == 0 {
		return f, false
	}
	const ev = `,"event":"`
	i := bytes.Index(line, []byte(ev))
	if i < 0 {
		return f, false
	}
	rest := line[i+len(ev):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return f, false
	}
	f.event = string(rest[:j])
	body := line[:len(line)-1]
	const pv = `,"prev":"`
	if k := len(body) - len(pv) - 2*sha256.Size - 1; k > 0 && bytes.HasPrefix(body[k:], []byte(pv)) && body[len(body)-1] == '"' {
		var link [sha256.Size]byte
		if _, err := hex.Decode(link[:], body[k+len(pv):len(body)-1]); err != nil {
			return f, false
		}
		f.prev, body = &link, body[:k]
	}
	for _, s := range []string{audit.SourceServe, audit.SourceCLI, audit.SourceMCP, audit.SourceUI} {
		if bytes.HasSuffix(body, []byte(`,"source":"`+s+`"`)) {
			f.source = s
			return f, true
		}
	}
	return f, false
}

func isLink(s string) bool {
	if len(s) != 2*sha256.Size {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}
