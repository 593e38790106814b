package ops

import (
	"bytes"
	"encoding/base64"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/internal/jsonstr"
	"github.com/arca-secrets/arca/internal/scrub"
	"github.com/arca-secrets/arca/ops/upstream"
)

// outcome is the result of a use before its event is written: Finish
// scrubs it (scrub) against the credentials it used and the values the
// session released, which counts its redactions into its event, and only
// then writes the event and returns it.
type outcome interface {
	Result
	scrub(set *scrub.Set)
}

// scrubUse registers the credentials of a use with set (a fresh Set when
// nil) and returns it: what the use's outcome is scrubbed against. A
// credential goes in under its bare ref, as a released value does.
func scrubUse(set *scrub.Set, creds []used) *scrub.Set {
	if set == nil {
		set = scrub.NewSet()
	}
	for _, c := range creds {
		_ = set.Add(c.ref.Path(), c.value.Reveal()) // one too short is listed unscrubbable
	}
	return set
}

// redactions gathers the redactions of several texts by label.
type redactions []scrub.Redaction

func (rs *redactions) add(more []scrub.Redaction) {
	for _, m := range more {
		if i := slices.IndexFunc(*rs, func(r scrub.Redaction) bool { return r.Label == m.Label }); i >= 0 {
			(*rs)[i].Count += m.Count
			continue
		}
		*rs = append(*rs, m)
	}
}

func (rs redactions) total() int {
	n := 0
	for _, r := range rs {
		n += r.Count
	}
	return n
}

// appendJSON appends rs as the result schemas' redactions.
func (rs redactions) appendJSON(b []byte) []byte {
	b = append(b, '[')
	for i, r := range rs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"ref":`...)
		b = jsonstr.Append(b, "arca://"+r.Label)
		b = append(b, `,"count":`...)
		b = strconv.AppendInt(b, int64(r.Count), 10)
		b = append(b, '}')
	}
	return append(b, ']')
}

// HTTPResult is the result of http: the upstream's status, its safe
// headers and its body, scrubbed. Until Finish has scrubbed it, it holds
// the raw response and the credentials, and encodes nothing of them.
type HTTPResult struct {
	Service    string
	Status     int
	Header     http.Header // scrubbed
	Body       []byte      // scrubbed
	Truncated  bool
	Redactions []scrub.Redaction
	ElapsedMS  int64
	Decision

	raw   *upstream.Response
	use   *audit.Use
	creds []used
}

// scrub replaces the raw response by its scrubbed form and counts the
// redactions into the event.
func (r *HTTPResult) scrub(set *scrub.Set) {
	set = scrubUse(set, r.creds)
	var rs redactions
	r.Header = scrubHeader(set, r.raw.Header, &rs)
	var red []scrub.Redaction
	if r.Truncated = r.raw.Truncated; r.Truncated {
		r.Body, red = set.ScrubCut(r.raw.Body)
	} else {
		r.Body, red = set.Scrub(r.raw.Body)
	}
	rs.add(red)
	r.Redactions, r.use.Redactions = rs, rs.total()
	r.raw, r.creds = nil, nil
}

// AppendJSON appends r as the result.http schema says: the body as text
// when it is UTF-8, else as body_b64.
func (r *HTTPResult) AppendJSON(b []byte) []byte {
	b = append(b, `{"service":`...)
	b = jsonstr.Append(b, r.Service)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(r.Status), 10)
	b = append(b, `,"headers":{`...)
	for i, k := range slices.Sorted(maps.Keys(r.Header)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(jsonstr.Append(b, k), ":["...)
		for j, v := range r.Header[k] {
			if j > 0 {
				b = append(b, ',')
			}
			b = jsonstr.Append(b, v)
		}
		b = append(b, ']')
	}
	b = append(b, '}')
	if utf8.Valid(r.Body) {
		b = jsonstr.Append(append(b, `,"body":`...), r.Body)
	} else {
		b = append(b, `,"body_b64":"`...)
		b = base64.StdEncoding.AppendEncode(b, r.Body)
		b = append(b, '"')
	}
	b = strconv.AppendBool(append(b, `,"truncated":`...), r.Truncated)
	b = redactions(r.Redactions).appendJSON(append(b, `,"redactions":`...))
	b = strconv.AppendInt(append(b, `,"elapsed_ms":`...), r.ElapsedMS, 10)
	return append(b, '}')
}

// scrubHeader returns h scrubbed, without Content-Length (the upstream's:
// the body answered is scrubbed, and maybe cut). The values go through
// the engine as one text, a line each (a header value holds no line
// break), unless an occurrence joins two of them: then each on its own.
func scrubHeader(set *scrub.Set, h http.Header, rs *redactions) http.Header {
	keys := slices.Sorted(maps.Keys(h))
	keys = slices.DeleteFunc(keys, func(k string) bool { return k == "Content-Length" })
	var text []byte
	n := 0
	for _, k := range keys {
		for _, v := range h[k] {
			text = append(append(text, v...), '\n')
			n++
		}
	}
	out, red := set.Scrub(text)
	lines := bytes.Split(bytes.TrimSuffix(out, []byte("\n")), []byte("\n"))
	whole := len(lines) == n
	if whole {
		rs.add(red)
	}
	sh := make(http.Header, len(keys))
	for _, k := range keys {
		for _, v := range h[k] {
			if whole {
				sh[k], lines = append(sh[k], string(lines[0])), lines[1:]
				continue
			}
			o, red := set.Scrub([]byte(v))
			rs.add(red)
			sh[k] = append(sh[k], string(o))
		}
	}
	return sh
}
