package client

import (
	"math/bits"
	"time"

	"github.com/arca-secrets/arca/internal/jsonstr"
	"github.com/arca-secrets/arca/vault/secret"
)

// fast decodes a response line for request req into result as slow
// (encoding/json) does, without reflection, for the shapes serve writes:
// the envelope, an error and a policy verdict, and the results of get,
// put, rotate, rm and shutdown. Fields may come in any order and unknown
// ones are passed over (responses are open to added fields). handled is
// false, and result untouched, when the line holds anything fast turns
// down; decode then gives it to slow, so that what a caller gets never
// depends on the fast path (a differential test and FuzzDecode hold the
// two to the same answers).
func fast[T any](line []byte, req sent, result *T) (handled bool, err error) {
	d := dec{b: line, ref: req.ref, env: req.env}
	var (
		id   []byte
		ok   bool
		e    *Error
		p    *Policy
		r    T
		seen uint32
	)
	d.must('{')
	for more := !d.eat('}'); more && !d.no; more = d.more('}') {
		var k []byte
		switch { // serve's order first, read by a comparison
		case seen == 0 && d.plainKey(`"id":`):
			k = keyID
		case seen == 1 && d.plainKey(`"ok":`):
			k = keyOK
		case seen == 3 && d.plainKey(`"result":`):
			k = keyResult
		default:
			k = d.key()
		}
		switch string(k) {
		case "id":
			d.once(&seen, 1)
			d.ws()
			start := d.i
			d.skip(2)
			id = line[start:d.i]
		case "ok":
			d.once(&seen, 2)
			ok = d.bool()
		case "result":
			d.once(&seen, 4)
			decodeResult(&d, &r)
		case "error":
			d.once(&seen, 8)
			e = d.errorObject()
		case "policy":
			d.once(&seen, 16)
			p = d.policy()
		default:
			d.unknown(k, envelopeNames())
		}
	}
	if d.ws(); d.i != len(d.b) || d.no { // anything but whitespace after the object
		forget(&r)
		return false, nil
	}
	if ok && p != nil {
		withPolicy(&r, p) // on r, not result: the caller's result stays on its stack
	}
	*result = r
	return true, verdict(id, req.id, ok, e, p)
}

func envelopeNames() []string { return []string{"id", "ok", "result", "error", "policy"} }

var keyID, keyOK, keyResult = []byte("id"), []byte("ok"), []byte("result")

// forget wipes a value read from a line that was then turned down (slow
// reads it again into a fresh one) or that failed.
func forget[T any](r *T) {
	if g, ok := any(r).(*Got); ok {
		clear(g.Value.Reveal())
	}
}

// decodeResult reads a result of the types that have a fast path; any
// other type turns the line down.
func decodeResult[T any](d *dec, r *T) {
	switch r := any(r).(type) {
	case *Got:
		d.record(&r.Meta, &r.Value, nil, &r.ExpiresAt, recordFields|fValue|fExpiresAt)
	case *Put:
		d.record(&r.Meta, nil, &r.Created, nil, recordFields|fCreated)
	case *Rotated:
		d.record(&r.Meta, nil, nil, nil, recordFields)
	case *Removed:
		var m Meta
		d.record(&m, nil, nil, nil, fRef|fEnv|fVersion)
		r.Ref, r.Env, r.Version = m.Ref, m.Env, m.Version
	case *struct{}:
		if d.peek() != '{' {
			d.fail()
		}
		d.skip(2)
	default:
		d.fail()
	}
}

// The fields of the record results, as bits.
const (
	fRef = 1 << iota
	fEnv
	fValue
	fVersion
	fCreatedAt
	fUpdatedAt
	fRotatedAt
	fCreated
	fExpiresAt

	recordFields = fRef | fEnv | fVersion | fCreatedAt | fUpdatedAt | fRotatedAt
)

var fieldNames = [...]string{"ref", "env", "value", "version", "created_at", "updated_at", "rotated_at", "created", "expires_at"}

// quotedNames are the keys as serve spells them, inOrder the fields (as
// indexes of fieldNames) in the order serve writes them, orderOf the
// other way round: a key where serve puts it is read by a comparison.
var (
	quotedNames = [...]string{`"ref":`, `"env":`, `"value":`, `"version":`, `"created_at":`, `"updated_at":`, `"rotated_at":`, `"created":`, `"expires_at":`}
	inOrder     = [...]int{0, 1, 2, 3, 7, 4, 5, 6, 8}
	orderOf     = [...]int{0, 1, 2, 3, 5, 6, 7, 4, 8}
)

// unknownIn passes over an unknown field of a record, unless encoding/json
// would take it for one of fields.
func (d *dec) unknownIn(k []byte, fields uint32) {
	for i, n := range fieldNames {
		if fields&(1<<i) != 0 && len(n) == len(k) && asciiFold(k, n) {
			d.fail()
		}
	}
	d.skip(2)
}

func fieldBit(k []byte) uint32 {
	switch string(k) {
	case "ref":
		return fRef
	case "env":
		return fEnv
	case "value":
		return fValue
	case "version":
		return fVersion
	case "created_at":
		return fCreatedAt
	case "updated_at":
		return fUpdatedAt
	case "rotated_at":
		return fRotatedAt
	case "created":
		return fCreated
	case "expires_at":
		return fExpiresAt
	}
	return 0
}

// record reads a record result holding the given fields; another key is
// an unknown field, passed over.
func (d *dec) record(m *Meta, v *SecretValue, created *bool, expires *time.Time, fields uint32) {
	if d.peek() != '{' {
		d.fail()
		return
	}
	d.i++
	var seen uint32
	at := -1 // where in serve's order the last field read is
	for more := !d.eat('}'); more && !d.no; more = d.more('}') {
		bit, next := uint32(0), at+1
		for next < len(inOrder) && fields&(1<<inOrder[next]) == 0 {
			next++
		}
		if next < len(inOrder) && d.plainKey(quotedNames[inOrder[next]]) {
			bit, at = 1<<inOrder[next], next // the key serve writes next
		} else {
			k := d.key()
			bit = fieldBit(k) & fields
			if bit == 0 {
				d.unknownIn(k, fields)
				continue
			}
			at = orderOf[bits.TrailingZeros32(bit)]
		}
		d.once(&seen, bit)
		switch bit {
		case fRef:
			m.Ref = d.textOr(d.ref)
		case fEnv:
			m.Env = d.textOr(d.env)
		case fValue:
			v.Secret = secret.New(d.secret())
		case fVersion:
			m.Version = d.uint()
		case fCreatedAt:
			m.CreatedAt = d.time()
		case fUpdatedAt:
			m.UpdatedAt = d.time()
		case fRotatedAt:
			m.RotatedAt = d.time()
		case fCreated:
			*created = d.bool()
		case fExpiresAt:
			*expires = d.time()
		}
	}
}

// secret reads a value as SecretValue.UnmarshalJSON does: the bytes as they
// are when the string holds no escape, else decoded as encoding/json does.
func (d *dec) secret() []byte {
	body, esc, _ := d.str()
	switch {
	case d.no:
		return nil
	case !esc && len(body) == 0:
		return nil // as append([]byte(nil)) gives SecretValue
	case !esc:
		b := make([]byte, len(body))
		copy(b, body)
		return b
	}
	return jsonstr.Unquote(body)
}

// time reads a time in the one form serve writes, RFC 3339 in UTC with nine
// fractional digits, checking what time.Time's UnmarshalJSON checks; any
// other form is turned down.
func (d *dec) time() time.Time {
	s, _, _ := d.str()
	if !d.no && d.lastTime != nil && string(s) == string(d.lastTime) {
		return d.last // updated_at is often created_at
	}
	if d.no || len(s) != len("2006-01-02T15:04:05.000000000Z") ||
		s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[19] != '.' || s[29] != 'Z' {
		d.fail()
		return time.Time{}
	}
	bad := false
	digit := func(at int) int {
		c := s[at] - '0' // a byte below '0' wraps past 9
		bad = bad || c > 9
		return int(c)
	}
	two := func(at int) int { return digit(at)*10 + digit(at+1) }
	year := two(0)*100 + two(2)
	month, day, hour, minute, sec := two(5), two(8), two(11), two(14), two(17)
	nsec := 0
	for at := 20; at < 29; at++ {
		nsec = nsec*10 + digit(at)
	}
	if bad || month < 1 || month > 12 || day < 1 || day > daysIn(month, year) || hour > 23 || minute > 59 || sec > 59 {
		d.fail()
		return time.Time{}
	}
	// The same Time as time.Date(..., time.UTC) makes, without its zone
	// lookup: Unix, then UTC, which drops the location as Date does.
	unix := daysSinceEpoch(year, month, day)*86400 + int64(hour*3600+minute*60+sec)
	d.lastTime, d.last = s, time.Unix(unix, int64(nsec)).UTC()
	return d.last
}

// daysSinceEpoch is the number of days from 1970-01-01 to the date, in the
// proleptic Gregorian calendar (H. Hinnant's days_from_civil).
func daysSinceEpoch(year, month, day int) int64 {
	y := int64(year)
	if month <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era-- // floor division
	}
	yoe := y - era*400
	mp := int64(month+9) % 12 // March is 0
	doy := (153*mp+2)/5 + int64(day) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// errorNames are the keys of an error fast knows. details is among them
// to be turned down: an error with details is slow's to read.
func errorNames() []string { return []string{"code", "message", "details"} }

// errorObject reads the error of a response, one without details.
func (d *dec) errorObject() *Error {
	if d.peek() != '{' {
		d.fail()
		return nil
	}
	d.i++
	e := &Error{}
	var seen uint32
	for more := !d.eat('}'); more && !d.no; more = d.more('}') {
		switch k := d.key(); string(k) {
		case "code":
			d.once(&seen, 1)
			e.Code = d.text()
		case "message":
			d.once(&seen, 2)
			e.Message = d.text()
		default:
			d.unknown(k, errorNames())
		}
	}
	return e
}

func policyNames() []string { return []string{"allow", "reason", "obligations", "degraded"} }

// policy reads a PDP verdict.
func (d *dec) policy() *Policy {
	if d.peek() != '{' {
		d.fail()
		return nil
	}
	d.i++
	p := &Policy{}
	var seen uint32
	for more := !d.eat('}'); more && !d.no; more = d.more('}') {
		switch k := d.key(); string(k) {
		case "allow":
			d.once(&seen, 1)
			p.Allow = d.bool()
		case "reason":
			d.once(&seen, 2)
			p.Reason = d.text()
		case "obligations":
			d.once(&seen, 4)
			if d.peek() != '[' {
				d.fail()
				break
			}
			d.i++
			p.Obligations = []string{}
			for more := !d.eat(']'); more && !d.no; more = d.more(']') {
				p.Obligations = append(p.Obligations, d.text())
			}
		case "degraded":
			d.once(&seen, 8)
			p.Degraded = d.bool()
		default:
			d.unknown(k, policyNames())
		}
	}
	return p
}
