package audit

import "time"

// The seconds from 1970 to the first and past the last instant AppendTime
// writes itself: years 1 to 9999, what four digits hold.
const (
	firstSec = -62135596800 // 0001-01-01T00:00:00Z
	endSec   = 253402300800 // 10000-01-01T00:00:00Z
)

// digitPairs is "00" to "99", two bytes each.
const digitPairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

// AppendTime appends t in UTC as TimeFormat does, without the general
// layout interpreter or a second pass over the date: audit stamps and
// record times are on every request.
func AppendTime(b []byte, t time.Time) []byte {
	sec := t.Unix()
	if sec < firstSec || sec >= endSec {
		return t.UTC().AppendFormat(b, TimeFormat)
	}
	b = appendSecond(b, sec)
	return appendNanos(b, t.Nanosecond())
}

// appendSecond appends the part of a stamp that changes once a second:
// "2006-01-02T15:04:05.", for sec (from 1970) within [firstSec, endSec).
func appendSecond(b []byte, sec int64) []byte {
	days := sec / 86400
	if sec%86400 < 0 {
		days--
	}
	s := int(sec - days*86400)
	// The civil date of a day count, by eras of 400 years from 0000-03-01
	// (H. Hinnant's days_from_civil, inverted).
	z := days + 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era--
	}
	doe := int(z - era*146097)
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	year := yoe + int(era)*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	day := doy - (153*mp+2)/5 + 1
	month := mp + 3
	if mp >= 10 {
		month = mp - 9
		year++
	}
	b = appendPair(appendPair(b, year/100), year%100)
	b = append(appendPair(append(b, '-'), month), '-')
	b = append(appendPair(b, day), 'T')
	b = append(appendPair(b, s/3600), ':')
	b = append(appendPair(b, s/60%60), ':')
	return append(appendPair(b, s%60), '.')
}

// appendNanos appends the nine digits of ns (below 1e9) and the zone, "Z".
func appendNanos(b []byte, ns int) []byte {
	var d [10]byte
	d[9] = 'Z'
	for i := 7; i >= 1; i -= 2 {
		p := ns % 100 * 2
		d[i], d[i+1] = digitPairs[p], digitPairs[p+1]
		ns /= 100
	}
	d[0] = byte('0' + ns)
	return append(b, d[:]...)
}

// appendPair appends v (below 100) as two digits.
func appendPair(b []byte, v int) []byte {
	return append(b, digitPairs[2*v], digitPairs[2*v+1])
}

// FormatTime returns AppendTime's text.
func FormatTime(t time.Time) string {
	var buf [len(TimeFormat)]byte
	return string(AppendTime(buf[:0], t))
}

// stamper formats the stamps of one writer: the second's text is made
// once and kept while the clock stays in it, so a stamp costs its nine
// digits of nanoseconds.
type stamper struct {
	sec    int64
	text   [len("2006-01-02T15:04:05.")]byte
	filled bool
}

// append appends t as AppendTime does.
func (s *stamper) append(b []byte, t time.Time) []byte {
	sec := t.Unix()
	if sec < firstSec || sec >= endSec {
		return AppendTime(b, t)
	}
	if !s.filled || sec != s.sec {
		appendSecond(s.text[:0], sec)
		s.sec, s.filled = sec, true
	}
	return appendNanos(append(b, s.text[:]...), t.Nanosecond())
}
