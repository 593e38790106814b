package audit

import (
	"testing"
	"time"
)

// TestAppendTime holds AppendTime to TimeFormat's text, across the years it
// writes itself and those it leaves to the layout interpreter.
func TestAppendTime(t *testing.T) {
	for _, tm := range []time.Time{
		time.Date(2026, 12, 6, 6, 26, 17, 127292977, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(2024, 2, 29, 12, 0, 0, 5, time.FixedZone("x", 5*3600+1800)),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Unix(0, 0),
		time.Unix(1<<33, 999),
	} {
		want := tm.UTC().Format(TimeFormat)
		if got := string(AppendTime([]byte("x"), tm)); got != "x"+want {
			t.Errorf("AppendTime(%v) = %q, want %q", tm, got, "x"+want)
		}
		if got := FormatTime(tm); got != want {
			t.Errorf("FormatTime(%v) = %q, want %q", tm, got, want)
		}
	}
}

func BenchmarkAppendTime(b *testing.B) {
	tm := time.Date(2026, 12, 6, 6, 26, 17, 127292977, time.UTC)
	buf := make([]byte, 0, 64)
	for b.Loop() {
		buf = AppendTime(buf[:0], tm)
	}
}

// TestStamper holds a writer's cached second to AppendTime, within one
// second, across a second's end and back.
func TestStamper(t *testing.T) {
	var s stamper
	base := time.Date(2026, 12, 31, 23, 59, 59, 0, time.UTC)
	for _, tm := range []time.Time{
		base, base.Add(999999999), base.Add(time.Second), base.Add(1), base.AddDate(-2030, 0, 0), base.AddDate(9000, 0, 0), base,
	} {
		if got, want := string(s.append(nil, tm)), string(AppendTime(nil, tm)); got != want {
			t.Errorf("stamper(%v) = %q, AppendTime = %q", tm, got, want)
		}
	}
}

// TestAppendTimeDays checks every day's date over four centuries and a
// little, both sides of 1970 and of the year 1.
func TestAppendTimeDays(t *testing.T) {
	for _, start := range []time.Time{
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(1800, 1, 1, 23, 59, 59, 1, time.UTC),
		time.Date(9600, 1, 1, 12, 30, 0, 0, time.UTC),
	} {
		for d := range 146097 + 400 {
			tm := start.AddDate(0, 0, d)
			if tm.Year() > 9999 {
				break
			}
			if got, want := string(AppendTime(nil, tm)), tm.Format(TimeFormat); got != want {
				t.Fatalf("AppendTime(%v) = %q, want %q", tm, got, want)
			}
		}
	}
}
