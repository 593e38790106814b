package serve

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/internal/jsonstr"
	"github.com/arca-secrets/arca/internal/scrub"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/vault"
)

// scrubs is what a session's scrub op works on: every value the session
// released, each under its bare ref (ns/name), and the streams open. It
// lives as long as the session and is used on the session's goroutine
// only: a value is registered as the answer that releases it is written,
// in request order, so a scrub sent after a get redacts that get's value.
type scrubs struct {
	set     *scrub.Set
	streams map[string]*scrubStream
	now     func() time.Time
	// over lists the refs of values the Set could not hold (past its
	// bounds): unscrubbable as the too short ones are.
	over []string
}

// scrubStream is one open stream: the engine's stream, what it passed on
// and scrub has not yet answered (at most an incomplete UTF-8 character
// between chunks), and the redactions already answered.
type scrubStream struct {
	st       *scrub.Stream
	out      bytes.Buffer
	answered map[string]int
	last     time.Time
}

func newScrubs(now func() time.Time) *scrubs {
	return &scrubs{set: scrub.NewSet(), streams: map[string]*scrubStream{}, now: now}
}

// release registers a value the session handed out under ref
// (arca://ns/name): its label, written into placeholders, is the bare
// ns/name. A value the engine refuses is listed as unscrubbable.
func (sc *scrubs) release(ref string, v vault.Secret) {
	label := strings.TrimPrefix(ref, "arca://")
	err := sc.set.Add(label, v.Reveal())
	if err != nil && !errors.Is(err, scrub.ErrTooShort) && !slices.Contains(sc.over, label) {
		sc.over = append(sc.over, label)
	}
}

// scrubResult is the result of scrub. It holds no value: Text is the text
// sent, scrubbed.
type scrubResult struct {
	Text         []byte
	Redactions   []scrub.Redaction
	Unscrubbable []string // labels
	in           int      // bytes sent
}

// Verdict is nil: scrub consults no PDP.
func (scrubResult) Verdict() *audit.Policy { return nil }

// AppendJSON appends r as the result.scrub schema says, its refs in their
// canonical form.
func (r scrubResult) AppendJSON(b []byte) []byte {
	b = append(b, `{"text":`...)
	b = jsonstr.Append(b, r.Text)
	b = append(b, `,"redactions":[`...)
	for i, rd := range r.Redactions {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"ref":`...)
		b = jsonstr.Append(b, "arca://"+rd.Label)
		b = append(b, `,"count":`...)
		b = strconv.AppendInt(b, int64(rd.Count), 10)
		b = append(b, '}')
	}
	b = append(b, `],"unscrubbable":[`...)
	for i, l := range r.Unscrubbable {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonstr.Append(b, "arca://"+l)
	}
	return append(b, "]}"...)
}

// message is the audit event's account of r: counts only, never text.
func (r scrubResult) message() string {
	n := 0
	for _, rd := range r.Redactions {
		n += rd.Count
	}
	return fmt.Sprintf("%d bytes in, %d bytes out, %d redactions", r.in, len(r.Text), n)
}

// scrub answers one scrub request: the whole text when it names no
// stream; else the text as the next chunk of its stream, which final (the
// default) ends. Streams idle for manifest.StreamIdle are dropped first,
// the bytes they held back with them.
func (sc *scrubs) scrub(req *ops.Request) (scrubResult, error) {
	now := sc.now()
	for name, st := range sc.streams {
		if now.Sub(st.last) >= manifest.StreamIdle {
			delete(sc.streams, name)
		}
	}
	res := scrubResult{in: len(req.Text), Unscrubbable: append(sc.set.Unscrubbable(), sc.over...)}
	if req.Sent()&manifest.FieldStream == 0 {
		res.Text, res.Redactions = sc.set.Scrub([]byte(req.Text))
		return res, nil
	}
	if req.Stream == "" {
		return scrubResult{}, ops.Errorf(manifest.BadRequest, "stream is empty (name a stream, or send none)")
	}
	final := req.IsFinal()
	st := sc.streams[req.Stream]
	if st == nil {
		if !final && len(sc.streams) >= manifest.MaxStreams {
			return scrubResult{}, ops.Errorf(manifest.BadRequest,
				"%d scrub streams are open, the most a session holds: end one (final true) or leave one unused for %d s",
				manifest.MaxStreams, int(manifest.StreamIdle.Seconds()))
		}
		st = &scrubStream{answered: map[string]int{}}
		st.st = sc.set.NewStream(&st.out)
		if !final {
			sc.streams[req.Stream] = st
		}
	}
	st.last = now
	_, _ = st.st.Write([]byte(req.Text)) // a bytes.Buffer never fails
	if final {
		_ = st.st.Close()
		delete(sc.streams, req.Stream)
	}
	out := st.out.Bytes()
	n := len(out)
	if !final {
		n = completeUTF8(out)
	}
	res.Text = bytes.Clone(out[:n])
	rest := copy(out, out[n:])
	st.out.Truncate(rest)
	for _, rd := range st.st.Redactions() {
		if d := rd.Count - st.answered[rd.Label]; d > 0 {
			res.Redactions = append(res.Redactions, scrub.Redaction{Label: rd.Label, Count: d})
			st.answered[rd.Label] = rd.Count
		}
	}
	return res, nil
}

// completeUTF8 returns the length of b without an incomplete UTF-8
// character at its end: the engine passes bytes on, and a stream's chunk
// may end inside a character it holds back; the rest goes with the next
// chunk, so every chunk's text is a string.
func completeUTF8(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return i
			}
			break
		}
	}
	return len(b)
}
