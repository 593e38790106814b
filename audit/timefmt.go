package audit

import "time"

// AppendTime appends t in UTC as TimeFormat does, without the general
// layout interpreter: audit stamps and record times are on every request.
func AppendTime(b []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	hour, minute, sec := t.Clock()
	if year < 0 || year > 9999 {
		return t.AppendFormat(b, TimeFormat)
	}
	b = appendDigits(b, year, 4)
	b = append(b, '-')
	b = appendDigits(b, int(month), 2)
	b = append(b, '-')
	b = appendDigits(b, day, 2)
	b = append(b, 'T')
	b = appendDigits(b, hour, 2)
	b = append(b, ':')
	b = appendDigits(b, minute, 2)
	b = append(b, ':')
	b = appendDigits(b, sec, 2)
	b = append(b, '.')
	b = appendDigits(b, t.Nanosecond(), 9)
	return append(b, 'Z')
}

// FormatTime returns AppendTime's text.
func FormatTime(t time.Time) string {
	var buf [len(TimeFormat)]byte
	return string(AppendTime(buf[:0], t))
}

func appendDigits(b []byte, v, width int) []byte {
	var d [9]byte
	for i := width - 1; i >= 0; i-- {
		d[i] = byte('0' + v%10)
		v /= 10
	}
	return append(b, d[:width]...)
}
