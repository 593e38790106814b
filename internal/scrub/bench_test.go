package scrub

import (
	"bytes"
	"io"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/arca-secrets/arca/internal/growth"
)

// benchValues registers n random 32-byte values whose bytes include the
// characters JSON, URL and shell escape, so that each has about 14
// distinct forms.
func benchValues(tb testing.TB, n int) (*Set, [][]byte) {
	tb.Helper()
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	r := rand.New(rand.NewPCG(1, 2))
	s := NewSet()
	var forms [][]byte
	for i := range n {
		v := make([]byte, 32)
		for j := range v {
			v[j] = alphabet[r.IntN(len(alphabet))]
		}
		for j, c := range []byte(`/<"' `) { // one of each at a random place
			v[j*6+r.IntN(6)] = c
		}
		if err := s.Add("bench/value-"+strconv.Itoa(i), v); err != nil {
			tb.Fatal(err)
		}
		forms = append(forms, formsOf(v)...)
	}
	s.Forms() // builds the matcher, outside any timing
	return s, forms
}

// logText is n bytes of log lines and source-like text, with one of forms
// every MiB (when forms is not empty).
func logText(n int, forms [][]byte) []byte {
	words := []string{"get", "put", "ref=", "ns/name", "took", "ms", "user=alice", "error:", "connection",
		"refused", "func", "return", "err", "nil", "if", "{", "}", "request_id=", "200", "OK", "the", "value",
		"dial", "tcp", "127.0.0.1:2379", "json:", `"op":"get"`, "x := y", "// a comment", "for i := range n"}
	r := rand.New(rand.NewPCG(3, 4))
	b := make([]byte, 0, n+256)
	next := 1 << 20
	for len(b) < n {
		b = append(b, "2026-12-06T08:52:10."...)
		b = strconv.AppendInt(b, int64(r.IntN(1000000)), 10)
		b = append(b, "Z INFO "...)
		for range 4 + r.IntN(10) {
			b = append(b, words[r.IntN(len(words))]...)
			b = append(b, ' ')
		}
		if len(b) >= next && len(forms) > 0 {
			b = append(b, forms[r.IntN(len(forms))]...)
			next += 1 << 20
		}
		b = append(b, '\n')
	}
	return b[:n]
}

// scrubTo streams text through s to w in writes of chunk bytes and
// returns the number of placeholders written.
func scrubTo(tb testing.TB, s *Set, w io.Writer, text []byte, chunk int) int {
	st := s.NewStream(w)
	for i := 0; i < len(text); i += chunk {
		if _, err := st.Write(text[i:min(i+chunk, len(text))]); err != nil {
			tb.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		tb.Fatal(err)
	}
	n := 0
	for _, r := range st.Redactions() {
		n += r.Count
	}
	return n
}

// BenchmarkScrub64MiB: 64 MiB of logs through a Stream in 64 KiB writes
// with 1,000 values registered, against bytes.Count of one 16-byte needle
// over the same text: the floor of reading the bytes once.
func BenchmarkScrub64MiB(b *testing.B) {
	s, forms := benchValues(b, 1000)
	againstCount(b, s, logText(64<<20, forms))
}

// BenchmarkScrubShortValue: the same with a value of 4 bytes added, whose
// forms the matcher looks for at every position instead of every 25th.
func BenchmarkScrubShortValue(b *testing.B) {
	s, forms := benchValues(b, 1000)
	if err := s.Add("short", []byte("k9!z")); err != nil {
		b.Fatal(err)
	}
	s.Forms()
	againstCount(b, s, logText(64<<20, forms))
}

// againstCount scrubs text through s and counts a needle in it in turns,
// in the same loop, and reports the speed of each and "speed/count", the
// scrub's speed over Count's: whatever else the machine does meanwhile
// falls on both alike.
func againstCount(b *testing.B, s *Set, text []byte) {
	needle := []byte("Zq7Xv2Lk9Wm4Rt8P")
	var scrub, count time.Duration
	found := 0
	for b.Loop() {
		t0 := time.Now()
		found = scrubTo(b, s, io.Discard, text, 64<<10)
		t1 := time.Now()
		if bytes.Count(text, needle) != 0 {
			b.Fatal("the needle is in the text")
		}
		scrub, count = scrub+t1.Sub(t0), count+time.Since(t1)
	}
	if found < len(text)>>20-4 {
		b.Fatalf("%d redactions of the %d forms planted", found, len(text)>>20)
	}
	mbs := func(d time.Duration) float64 { return float64(len(text)) * float64(b.N) / d.Seconds() / 1e6 }
	b.ReportMetric(mbs(scrub), "MB/s")
	b.ReportMetric(mbs(count), "MB/s-count")
	b.ReportMetric(float64(count)/float64(scrub), "speed/count")
	b.ReportMetric(float64(s.Forms())/1000, "forms/value")
}

// copier copies what is written to it into dst, from its start each
// time: a sink that reads every byte, as a pipe does.
type copier struct{ dst []byte }

func (c *copier) Write(p []byte) (int, error) { return copy(c.dst, p), nil }

// BenchmarkScrubNoValues: 64 MiB through a Stream of an empty Set into a
// copier, against copying it in 64 KiB pieces, in the same loop;
// "speed/copy" is the Stream's speed over copy's.
func BenchmarkScrubNoValues(b *testing.B) {
	text := logText(64<<20, nil)
	sink := &copier{dst: make([]byte, 64<<10)}
	s := NewSet()
	var scrub, cp time.Duration
	for b.Loop() {
		t0 := time.Now()
		scrubTo(b, s, sink, text, 64<<10)
		t1 := time.Now()
		for i := 0; i < len(text); i += 64 << 10 {
			_, _ = sink.Write(text[i:min(i+64<<10, len(text))])
		}
		scrub, cp = scrub+t1.Sub(t0), cp+time.Since(t1)
	}
	b.ReportMetric(float64(len(text))*float64(b.N)/scrub.Seconds()/1e6, "MB/s")
	b.ReportMetric(float64(cp)/float64(scrub), "speed/copy")
}

// BenchmarkScrubShape: the cost of 4 MiB and of 64 MiB, 1,000 values,
// in turns; their ratio is about 16 for a cost linear in the text.
func BenchmarkScrubShape(b *testing.B) {
	s, forms := benchValues(b, 1000)
	small, large := logText(4<<20, forms), logText(64<<20, forms)
	growth.Measure(b, "scrub", 1,
		growth.Size{Name: "4MiB", Op: func() { scrubTo(b, s, io.Discard, small, 64<<10) }},
		growth.Size{Name: "64MiB", Op: func() { scrubTo(b, s, io.Discard, large, 64<<10) }})
}

// BenchmarkBuild1000: building the matcher of 1,000 values, which the
// first scrub after an Add does.
func BenchmarkBuild1000(b *testing.B) {
	s, _ := benchValues(b, 1000)
	forms := distinct(s.st.forms)
	for b.Loop() {
		newMatcher(forms)
	}
}
