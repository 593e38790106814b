package trail

import (
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/internal/jsonstr"
)

// facts is what the index keeps of a line: its time and the strings a
// filter reads (slices of the line, or of their decoded text).
type facts struct {
	ts                                              int64 // Unix nanoseconds
	event, op, outcome, actor, env, ref, user, host []byte
	source                                          []byte
}

// errNotEvent is a line readFacts cannot read as an event.
var errNotEvent = errors.New("not an audit event")

// readFacts reads what the index needs of one line without decoding the
// whole event: one pass over the object's top level, keyed as arca
// writes them (exact, lower-case keys: audit.Event's). A string value
// with no escape and no byte over 0x7f is its own text, copied once; any
// other is decoded as encoding/json decodes it. Nested values (policy,
// approval, a request id) are skipped, each checked to be valid JSON. It
// accepts what encoding/json accepts as an object, with a ts that is a
// time, so the index refuses the lines the decoder would have. A line
// with a key that holds an escape, an upper-case letter or a byte over
// 0x7f is read by the decoder itself: it matches keys without regard to
// case, and such a key is never arca's.
func readFacts(line []byte) (facts, error) {
	var f facts
	var ts []byte
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return f, errNotEvent
	}
	i = skipSpace(line, i+1)
	if i < len(line) && line[i] == '}' {
		i++
	} else {
		for {
			kn, kesc, khigh := jsonstr.Scan(line[i:])
			if kn < 0 {
				return f, errNotEvent
			}
			key := line[i+1 : i+kn-1]
			if kesc || khigh || hasUpper(key) { // encoding/json folds case: let it decide
				return slowFacts(line)
			}
			i = skipSpace(line, i+kn)
			if i >= len(line) || line[i] != ':' {
				return f, errNotEvent
			}
			i = skipSpace(line, i+1)
			if i >= len(line) {
				return f, errNotEvent
			}
			n, ok := f.value(key, line[i:], &ts)
			if !ok {
				return f, errNotEvent
			}
			i = skipSpace(line, i+n)
			if i >= len(line) {
				return f, errNotEvent
			}
			if line[i] == '}' {
				i++
				break
			}
			if line[i] != ',' {
				return f, errNotEvent
			}
			i = skipSpace(line, i+1)
		}
	}
	if skipSpace(line, i) != len(line) {
		return f, errNotEvent
	}
	t, ok := parseStamp(ts)
	if !ok {
		return f, errBadTS{string(ts)}
	}
	f.ts = t
	return f, nil
}

// errBadTS is a line whose ts is not a time.
type errBadTS struct{ ts string }

func (e errBadTS) Error() string { return "not an audit event (its ts is " + strconv.Quote(e.ts) + ")" }

func hasUpper(b []byte) bool {
	for _, c := range b {
		if c >= 'A' && c <= 'Z' {
			return true
		}
	}
	return false
}

// value reads the value of key at the start of b, as encoding/json would
// decode it into an audit.Event: a string field takes a string or null,
// a number field an integer literal of its kind or null, policy and
// approval their objects; any other key any valid JSON. It keeps the
// strings the index wants, ts in *ts, and returns the value's length.
func (f *facts) value(key, b []byte, ts *[]byte) (int, bool) {
	if b[0] == '"' {
		n, esc, high := jsonstr.Scan(b)
		if n < 0 {
			return 0, false
		}
		body := b[1 : n-1]
		if esc || high {
			body = jsonstr.Unquote(body)
		}
		if dst := f.field(key); dst != nil {
			*dst = body
			return n, true
		}
		switch kindOf(key) {
		case kindString, kindAny:
			if string(key) == "ts" {
				*ts = body
			}
			return n, true
		}
		return 0, false
	}
	k := kindOf(key)
	if k == kindUint || k == kindInt {
		if n := intEnd(b, k == kindInt); n > 0 {
			return n, true
		}
	}
	n := valueEnd(b)
	if n < 0 {
		return 0, false
	}
	v := b[:n]
	if string(v) == "null" {
		return n, true
	}
	var err error
	switch k {
	case kindString:
		err = errNotEvent
	case kindUint:
		_, err = strconv.ParseUint(string(v), 10, 64)
	case kindInt:
		_, err = strconv.ParseInt(string(v), 10, 64)
	case kindPolicy:
		err = json.Unmarshal(v, new(audit.Policy))
	case kindApproval:
		err = json.Unmarshal(v, new(audit.Approval))
	}
	return n, err == nil
}

// The kinds of an event's keys, as audit.Event declares them.
const (
	kindAny = iota
	kindString
	kindUint
	kindInt
	kindPolicy
	kindApproval
)

func kindOf(key []byte) int {
	switch string(key) {
	case "ts", "event", "op", "outcome", "actor", "client", "attestation_sha256", "env", "ref", "code", "message", "grant",
		"service", "action", "method", "path", "via", "cause", "user", "host", "source", "prev":
		return kindString
	case "seq", "version":
		return kindUint
	case "v", "status", "exit_code", "bytes_in", "bytes_out", "elapsed_ms", "redactions":
		return kindInt
	case "policy":
		return kindPolicy
	case "approval":
		return kindApproval
	}
	return kindAny
}

// field is where the string value of key goes, or nil for a key the index
// does not keep.
func (f *facts) field(key []byte) *[]byte {
	switch string(key) {
	case "event":
		return &f.event
	case "op":
		return &f.op
	case "outcome":
		return &f.outcome
	case "actor":
		return &f.actor
	case "env":
		return &f.env
	case "ref":
		return &f.ref
	case "user":
		return &f.user
	case "host":
		return &f.host
	case "source":
		return &f.source
	}
	return nil
}

// slowFacts reads a line whose keys hold escapes with encoding/json.
func slowFacts(line []byte) (facts, error) {
	var e audit.Event
	if err := json.Unmarshal(line, &e); err != nil {
		return facts{}, errNotEvent
	}
	t, ok := parseStamp([]byte(e.TS))
	if !ok {
		return facts{}, errBadTS{e.TS}
	}
	b := func(s string) []byte { return []byte(s) }
	return facts{ts: t, event: b(e.Event), op: b(e.Op), outcome: b(e.Outcome), actor: b(e.Actor), env: b(e.Env), ref: b(e.Ref),
		user: b(e.User), host: b(e.Host), source: b(e.Source)}, nil
}

// valueEnd is the length of the JSON value at the start of b that is not
// a string: a number, true, false or null, read to the next delimiter, or
// an object or array, to its closing bracket. Each is checked as
// encoding/json checks it; -1 when it is not valid.
func valueEnd(b []byte) int {
	if len(b) == 0 {
		return -1
	}
	n := 0
	switch b[0] {
	case '{', '[':
		depth := 0
		for n < len(b) {
			switch b[n] {
			case '"':
				sn, _, _ := jsonstr.Scan(b[n:])
				if sn < 0 {
					return -1
				}
				n += sn
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			n++
			if depth == 0 {
				break
			}
		}
		if depth != 0 {
			return -1
		}
	default:
		for n < len(b) && b[n] != ',' && b[n] != '}' && b[n] != ' ' && b[n] != '\t' && b[n] != '\r' && b[n] != '\n' {
			n++
		}
	}
	if !json.Valid(b[:n]) {
		return -1
	}
	return n
}

// intEnd is the length of the integer literal at the start of b, as JSON
// writes one (no leading zero, a minus only when signed), followed by a
// delimiter, when it fits in 64 bits; 0 when it is not one (valueEnd
// then decides).
func intEnd(b []byte, signed bool) int {
	n := 0
	if signed && len(b) > 0 && b[0] == '-' {
		n++
	}
	d := n
	for n < len(b) && b[n] >= '0' && b[n] <= '9' {
		n++
	}
	switch {
	case n == d, n-d > 18, b[d] == '0' && n-d > 1: // over 18 digits: let strconv judge
		return 0
	case n < len(b) && b[n] != ',' && b[n] != '}' && b[n] != ' ':
		return 0
	}
	return n
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// parseStamp reads a ts: audit.TimeFormat's fixed width
// (2006-01-02T15:04:05.000000000Z) without the layout interpreter, any
// other RFC 3339 time with it.
func parseStamp(b []byte) (int64, bool) {
	if len(b) == len(audit.TimeFormat)-5 && b[4] == '-' && b[7] == '-' && b[10] == 'T' && b[13] == ':' && b[16] == ':' && b[19] == '.' && b[29] == 'Z' {
		var d [7]int
		ok := true
		for k, span := range [7][2]int{{0, 4}, {5, 7}, {8, 10}, {11, 13}, {14, 16}, {17, 19}, {20, 29}} {
			for _, c := range b[span[0]:span[1]] {
				ok = ok && c >= '0' && c <= '9'
				d[k] = d[k]*10 + int(c-'0')
			}
		}
		if ok && d[1] >= 1 && d[1] <= 12 && d[2] >= 1 && d[2] <= daysIn(d[0], d[1]) && d[3] < 24 && d[4] < 60 && d[5] < 60 {
			return time.Date(d[0], time.Month(d[1]), d[2], d[3], d[4], d[5], d[6], time.UTC).UnixNano(), true
		}
	}
	t, err := time.Parse(time.RFC3339Nano, string(b))
	if err != nil {
		return 0, false
	}
	return t.UnixNano(), true
}

// daysIn is the number of days of month in year.
func daysIn(year, month int) int {
	return time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}
