package inject

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func mats(kv ...string) []Materialized {
	var out []Materialized
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, Materialized{Name: kv[i], Value: secret(kv[i+1])})
	}
	return out
}

// redactWrites writes each chunk to a fresh redactor over secrets, closes
// it and returns what came out.
func redactWrites(t *testing.T, secrets []Materialized, chunks ...[]byte) string {
	t.Helper()
	var out bytes.Buffer
	r := NewRedactor(&out, secrets)
	for _, c := range chunks {
		n, err := r.Write(c)
		if err != nil || n != len(c) {
			t.Fatalf("Write(%d bytes) = %d, %v", len(c), n, err)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func TestRedactorWhole(t *testing.T) {
	for _, c := range []struct {
		name    string
		secrets []Materialized
		in      string
		want    string
	}{
		{"none", nil, "plain text", "plain text"},
		{"no match", mats("A", "hunter2"), "hunter hunter3", "hunter hunter3"},
		{"one", mats("A", "hunter2"), "pw=hunter2\n", "pw=<redacted:A>\n"},
		{"at both ends", mats("A", "xy"), "xyxy-xy", "<redacted:A><redacted:A>-<redacted:A>"},
		{"overlapping occurrences of one value", mats("A", "aa"), "aaaaa-aa", "<redacted:A>-<redacted:A>"},
		{"two names", mats("A", "aaa", "B", "bbb"), "bbb aaa", "<redacted:B> <redacted:A>"},
		{"repeated chars", mats("A", "aab"), "aaab", "a<redacted:A>"},
		{"repeated chars twice", mats("A", "aab"), "aaabaab aab", "a<redacted:A><redacted:A> <redacted:A>"},
		{"prefix values: longest wins", mats("S", "ab", "L", "abc"), "abc ab abd", "<redacted:L> <redacted:S> <redacted:S>d"},
		{"prefix values: order given does not matter", mats("L", "abc", "S", "ab"), "abc ab", "<redacted:L> <redacted:S>"},
		{"same value, first name shown", mats("FIRST", "dup", "SECOND", "dup"), "dup", "<redacted:FIRST>"},
		{"empty value ignored", mats("E", "", "A", "x"), "axa", "a<redacted:A>a"},
		{"overlap: one mark for both", mats("A", "abc", "B", "cde"), "abcde", "<redacted:A+B>"},
		{"overlap: names in the order they start", mats("A", "abc", "B", "cde"), "xcdeabcde", "x<redacted:B><redacted:A+B>"},
		{"a value's start is another's end", mats("A", "k3y-S", "B", "SECRET-TAIL-4c1e9a"), "[k3y-SECRET-TAIL-4c1e9a]", "[<redacted:A+B>]"},
		{"touching values stay two marks", mats("A", "abc", "B", "cde"), "abccde", "<redacted:A><redacted:B>"},
		{"a chain of overlaps", mats("A", "abc", "B", "cde", "C", "efg"), "abcdefg!", "<redacted:A+B+C>!"},
		{"a value inside another adds no name", mats("L", "abcd", "S", "bc"), "abcd bc", "<redacted:L> <redacted:S>"},
		{"a name once per mark", mats("A", "aba", "B", "ac"), "abababac", "<redacted:A+B>"},
		{"partial at the end is text", mats("A", "secret"), "a secr", "a secr"},
		{"newline and unicode", mats("A", "line1\nzwölf ✓"), "[line1\nzwölf ✓]", "[<redacted:A>]"},
		{"one byte", mats("A", "z"), "zzz", "<redacted:A><redacted:A><redacted:A>"},
	} {
		if got := redactWrites(t, c.secrets, []byte(c.in)); got != c.want {
			t.Errorf("%s: %q -> %q, want %q", c.name, c.in, got, c.want)
		}
	}
}

// reference redacts s in one go, by the rule NewRedactor documents: every
// occurrence of every value is found; occurrences that overlap make one
// span; a span's mark names the values of the occurrences that no other
// occurrence holds, in the order they start, each once.
func reference(s string, secrets []Materialized) string {
	type occurrence struct {
		start, end int
		name       string
	}
	var values, names []string
	for _, m := range secrets {
		if v := string(m.Value.Reveal()); v != "" && !m.Literal && !slices.Contains(values, v) {
			values, names = append(values, v), append(names, m.Name)
		}
	}
	var occs []occurrence // by start, then longest first
	for i := range len(s) {
		var here []occurrence
		for k, v := range values {
			if strings.HasPrefix(s[i:], v) {
				here = append(here, occurrence{i, i + len(v), names[k]})
			}
		}
		slices.SortFunc(here, func(a, b occurrence) int { return b.end - a.end })
		occs = append(occs, here...)
	}
	inside := func(o occurrence) bool {
		for _, p := range occs {
			if p != o && p.start <= o.start && o.end <= p.end {
				return true
			}
		}
		return false
	}
	var b strings.Builder
	at := 0
	for j := 0; j < len(occs); {
		start, end := occs[j].start, occs[j].end
		var spanNames []string
		for ; j < len(occs) && occs[j].start < end; j++ {
			end = max(end, occs[j].end)
			if !inside(occs[j]) && !slices.Contains(spanNames, occs[j].name) {
				spanNames = append(spanNames, occs[j].name)
			}
		}
		b.WriteString(s[at:start] + "<redacted:" + strings.Join(spanNames, "+") + ">")
		at = end
	}
	b.WriteString(s[at:])
	return b.String()
}

// uncovered returns the bytes of s that no occurrence of a value covers,
// in order: what a redactor's output must hold besides its marks.
func uncovered(s string, secrets []Materialized) string {
	covered := make([]bool, len(s))
	for _, m := range secrets {
		v := string(m.Value.Reveal())
		if v == "" || m.Literal {
			continue
		}
		for i := range len(s) {
			if strings.HasPrefix(s[i:], v) {
				for k := i; k < i+len(v); k++ {
					covered[k] = true
				}
			}
		}
	}
	var b strings.Builder
	for i := range len(s) {
		if !covered[i] {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// Every way of cutting a stream in two, and in three, gives the output of
// the whole stream.
func TestRedactorEverySplit(t *testing.T) {
	streams := []struct {
		secrets []Materialized
		in      string
	}{
		{mats("A", "hunter2"), "user=admin pw=hunter2 again:hunter2!hunter"},
		{mats("A", "aab"), "aaab aab aaaab aa"},
		{mats("S", "ab", "L", "abcd"), "abcd abc ab abcdab"},
		{mats("A", "abc", "B", "bcd", "C", "c"), "abcd bcd cc abc"},
		{mats("A", "aba", "B", "ac"), "abababac abab ac"},
		{mats("N", "l1\nl2\n"), "before l1\nl2\n after l1\nl2"},
	}
	for _, s := range streams {
		want := reference(s.in, s.secrets)
		if got := redactWrites(t, s.secrets, []byte(s.in)); got != want {
			t.Fatalf("whole %q: %q, reference %q", s.in, got, want)
		}
		in := []byte(s.in)
		for i := 0; i <= len(in); i++ {
			if got := redactWrites(t, s.secrets, in[:i], in[i:]); got != want {
				t.Fatalf("%q split at %d: %q, want %q", s.in, i, got, want)
			}
			for j := i; j <= len(in); j++ {
				if got := redactWrites(t, s.secrets, in[:i], in[i:j], nil, in[j:]); got != want {
					t.Fatalf("%q split at %d,%d: %q, want %q", s.in, i, j, got, want)
				}
			}
		}
		// One byte per write.
		var chunks [][]byte
		for i := range in {
			chunks = append(chunks, in[i:i+1])
		}
		if got := redactWrites(t, s.secrets, chunks...); got != want {
			t.Fatalf("%q byte by byte: %q, want %q", s.in, got, want)
		}
	}
}

// Random streams over a small alphabet, so that values and near-misses are
// frequent, cut at random points: always the reference output, and no
// value ever passes whole.
func TestRedactorRandomSplits(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "abc\n"
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	for round := 0; round < 2000; round++ {
		var secrets []Materialized
		for k := 0; k < 1+rng.IntN(3); k++ {
			secrets = append(secrets, Materialized{Name: string(rune('A' + k)), Value: secret(word(1 + rng.IntN(5)))})
		}
		in := []byte(word(rng.IntN(200)))
		want := reference(string(in), secrets)
		var chunks [][]byte
		for rest := in; len(rest) > 0; {
			n := min(rng.IntN(8), len(rest)) // 0: an empty write
			chunks = append(chunks, rest[:n])
			rest = rest[n:]
		}
		got := redactWrites(t, secrets, chunks...)
		if got != want {
			t.Fatalf("round %d: secrets %v in %q cut %q:\n got %q\nwant %q", round, secretsOf(secrets), in, chunks, got, want)
		}
		if left, keep := withoutMarks(got), uncovered(string(in), secrets); left != keep {
			t.Fatalf("round %d: secrets %v in %q: the text left is %q, want %q", round, secretsOf(secrets), in, left, keep)
		}
	}
}

// withoutMarks drops from s what a redactor writes in place of values.
func withoutMarks(s string) string {
	return regexp.MustCompile(`<redacted:[A-Z]+(\+[A-Z]+)*>`).ReplaceAllString(s, "")
}

// Any three values, any stream, any cuts: the reference output, and no
// byte of an occurrence of a value is left in it.
func FuzzRedactor(f *testing.F) {
	f.Add("k3y-S", "SECRET-TAIL-4c1e9a", "", []byte("[k3y-SECRET-TAIL-4c1e9a]"), uint64(1))
	f.Add("aa", "ab", "b", []byte("aaaabab-aab"), uint64(2))
	f.Add("abc", "cde", "efg", []byte("abcdefg abccde"), uint64(3))
	f.Add("x", "xx", "xxx", []byte("xxxxxxx"), uint64(4))
	f.Fuzz(func(t *testing.T, a, b, c string, in []byte, seed uint64) {
		if len(a)+len(b)+len(c) > 256 || len(in) > 4096 {
			return
		}
		secrets := mats("A", a, "B", b, "C", c)
		want := reference(string(in), secrets)
		rng := rand.New(rand.NewPCG(seed, seed))
		var chunks [][]byte
		for rest := in; len(rest) > 0; {
			n := min(rng.IntN(16), len(rest))
			chunks = append(chunks, rest[:n])
			rest = rest[n:]
		}
		got := redactWrites(t, secrets, chunks...)
		if got != want {
			t.Fatalf("secrets %q in %q cut %q:\n got %q\nwant %q", secretsOf(secrets), in, chunks, got, want)
		}
		if !bytes.ContainsRune(in, '<') {
			if left, keep := withoutMarks(got), uncovered(string(in), secrets); left != keep {
				t.Fatalf("secrets %q in %q: the text left is %q, want %q", secretsOf(secrets), in, left, keep)
			}
		}
	})
}

func secretsOf(ms []Materialized) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Name+"="+string(m.Value.Reveal()))
	}
	return out
}

// recorder keeps every Write it is given, to see what was passed on when.
type recorder struct{ writes []string }

func (r *recorder) Write(p []byte) (int, error) {
	r.writes = append(r.writes, string(p))
	return len(p), nil
}

// A canary cut into pieces never reaches the writer whole, and no write
// passes on more than a value's length minus one of a possible value.
func TestRedactorHoldsBackOnlyWhatCouldMatch(t *testing.T) {
	const canaryValue = "CANARY-7f3a-value"
	var rec recorder
	r := NewRedactor(&rec, mats("K", canaryValue))
	io.WriteString(r, "log: CANA")
	if strings.Join(rec.writes, "") != "log: " {
		t.Fatalf("after a partial value, passed on %q, want %q", rec.writes, "log: ")
	}
	io.WriteString(r, "RY-7f3a-")
	io.WriteString(r, "")
	io.WriteString(r, "val")
	io.WriteString(r, "ue and more CANARY")
	io.WriteString(r, " end CANARY-7f3a-valu")
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	all := strings.Join(rec.writes, "")
	if want := "log: <redacted:K> and more CANARY end CANARY-7f3a-valu"; all != want {
		t.Fatalf("output %q, want %q", all, want)
	}
	for _, w := range rec.writes {
		if strings.Contains(w, canaryValue) {
			t.Fatalf("a write carried the value: %q", w)
		}
	}
	// Text with no byte that starts a value is passed on at once.
	rec.writes = nil
	r = NewRedactor(&rec, mats("K", canaryValue))
	io.WriteString(r, "nothing to hold\n")
	if len(rec.writes) != 1 || rec.writes[0] != "nothing to hold\n" {
		t.Fatalf("plain text was held: %q", rec.writes)
	}
}

func TestRedactorCloseAndErrors(t *testing.T) {
	var out bytes.Buffer
	r := NewRedactor(&out, mats("A", "hunter2"))
	io.WriteString(r, "tail: hunt")
	if out.String() != "tail: " {
		t.Fatalf("before Close: %q", out.String())
	}
	if err := r.Close(); err != nil || out.String() != "tail: hunt" {
		t.Fatalf("Close = %v, output %q; want the tail flushed", err, out.String())
	}
	if err := r.Close(); err != nil {
		t.Fatalf("second Close = %v", err)
	}
	if _, err := r.Write([]byte("x")); err == nil {
		t.Fatal("Write after Close succeeded")
	}

	boom := errors.New("stdout is gone")
	failing := writerFunc(func([]byte) (int, error) { return 0, boom })
	r = NewRedactor(failing, mats("A", "hunter2"))
	if _, err := r.Write([]byte("text")); !errors.Is(err, boom) {
		t.Fatalf("Write to a failing writer = %v", err)
	}
	if _, err := r.Write([]byte("more")); !errors.Is(err, boom) {
		t.Fatalf("the error is not sticky: %v", err)
	}
	if err := r.Close(); !errors.Is(err, boom) {
		t.Fatalf("Close = %v, want the writer's error", err)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// Large output: 4 MiB through a redactor with a 64 KiB value whose first
// byte is everywhere in the stream (the worst case for the hold-back)
// passes every byte on once and redacts the one real occurrence.
func TestRedactorLargeOutput(t *testing.T) {
	big := strings.Repeat("q", 64<<10-1) + "!"
	secrets := mats("BIG", big, "SMALL", "needle-value")
	chunk := bytes.Repeat([]byte("some ordinary log line with a needle and q's: qqqq\n"), 1<<10)
	var n int
	r := NewRedactor(writerFunc(func(p []byte) (int, error) { n += len(p); return len(p), nil }), secrets)
	total := 0
	for total < 4<<20 {
		r.Write(chunk)
		total += len(chunk)
	}
	io.WriteString(r, "needle-value")
	r.Close()
	if n != total+len("<redacted:SMALL>") {
		t.Fatalf("passed on %d bytes, want %d", n, total+len("<redacted:SMALL>"))
	}
}
