package ops

import (
	"bytes"
	"encoding/base64"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
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

// scrubUse returns what a use's outcome is scrubbed against: set (a
// fresh Set when nil) with the credentials of the use registered, each
// under its bare ref as a released value is. When set cannot take one (it
// is at the engine's bounds: a session that released that much), it
// returns a Set of the credentials alone: whatever else goes unscrubbed,
// a credential never does.
func scrubUse(set *scrub.Set, creds []used) *scrub.Set {
	if set != nil && addCreds(set, creds) {
		return set
	}
	own := scrub.NewSet()
	addCreds(own, creds)
	return own
}

// scrubSets are the Sets a use's whole outcome is scrubbed against, in
// turn: set with the credentials (see scrubUse), or, when set could not
// take them, the credentials alone and then set.
func scrubSets(set *scrub.Set, creds []used) []*scrub.Set {
	use := scrubUse(set, creds)
	if set == nil || use == set {
		return []*scrub.Set{use}
	}
	return []*scrub.Set{use, set}
}

// addCreds registers creds with set and reports whether set took every
// one (a value too short to scrub is listed unscrubbable: set took it).
func addCreds(set *scrub.Set, creds []used) bool {
	took := true
	for _, c := range creds {
		if err := set.Add(c.ref.Path(), c.value.Reveal()); err != nil && !errors.Is(err, scrub.ErrTooShort) {
			took = false
		}
	}
	return took
}

// scrubText scrubs b against each of sets in turn, as cut (see
// scrub.Set.ScrubCut) when b was cut short, and counts the redactions
// into rs.
func scrubText(sets []*scrub.Set, b []byte, cut bool, rs *redactions) []byte {
	for _, set := range sets {
		var red []scrub.Redaction
		if cut {
			b, red = set.ScrubCut(b)
		} else {
			b, red = set.Scrub(b)
		}
		rs.add(red)
	}
	return b
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

// scrub replaces the raw response by its scrubbed form, header names
// included, and counts the redactions into the event.
func (r *HTTPResult) scrub(set *scrub.Set) {
	sets := scrubSets(set, r.creds)
	var rs redactions
	r.Header = scrubHeader(sets, credCased(r.raw.Header, r.creds), &rs)
	r.Truncated = r.raw.Truncated
	r.Body = scrubText(sets, r.raw.Body, r.Truncated, &rs)
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

// scrubHeader returns h scrubbed, names as well as values (an upstream may
// name a header after a value), without Content-Length (the upstream's:
// the body answered is scrubbed, and maybe cut). The pairs go through the
// engine as one text, "name NUL value" a line each (a header holds no NUL
// and no line break), unless an occurrence joins two of its parts: then
// each part on its own.
func scrubHeader(sets []*scrub.Set, h http.Header, rs *redactions) http.Header {
	keys := slices.DeleteFunc(slices.Sorted(maps.Keys(h)), func(k string) bool { return k == "Content-Length" })
	var text []byte
	n := 0
	for _, k := range keys {
		for _, v := range h[k] {
			text = append(append(append(append(text, k...), 0), v...), '\n')
			n++
		}
	}
	var whole redactions
	lines := bytes.Split(bytes.TrimSuffix(scrubText(sets, text, false, &whole), []byte("\n")), []byte("\n"))
	sh := make(http.Header, len(keys))
	if len(lines) == n && !slices.ContainsFunc(lines, func(l []byte) bool { return bytes.Count(l, []byte{0}) != 1 }) {
		rs.add(whole)
		for _, l := range lines {
			k, v, _ := bytes.Cut(l, []byte{0})
			sh[string(k)] = append(sh[string(k)], string(v))
		}
		return sh
	}
	for _, k := range keys {
		name := string(scrubText(sets, []byte(k), false, rs))
		for _, v := range h[k] {
			sh[name] = append(sh[name], string(scrubText(sets, []byte(v), false, rs)))
		}
	}
	return sh
}

// credCased returns h with each header name that holds a credential of
// creds in another ASCII case rewritten to hold it as it is, so that
// scrub, which matches bytes, finds it: net/http canonicalized the name
// the upstream sent (X-ABCdef became X-Abcdef). h itself is unchanged.
func credCased(h http.Header, creds []used) http.Header {
	out := make(http.Header, len(h))
	for k, vs := range h {
		nk := credCase(k, creds)
		out[nk] = append(out[nk], vs...)
	}
	return out
}

// credCase returns name with each occurrence of a credential of creds,
// in any ASCII case, written as the credential is.
func credCase(name string, creds []used) string {
	lower := strings.ToLower(name)
	if len(lower) != len(name) {
		return name // not ASCII: no header name net/http reads
	}
	b := []byte(name)
	for _, c := range creds {
		v := c.value.Reveal()
		lv := bytes.ToLower(v)
		if len(v) < scrub.MinLen || len(lv) != len(v) {
			continue
		}
		for from := 0; ; {
			i := strings.Index(lower[from:], string(lv))
			if i < 0 {
				break
			}
			copy(b[from+i:], v)
			from += i + len(v)
		}
	}
	return string(b)
}
