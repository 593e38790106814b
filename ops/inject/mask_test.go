package inject

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
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
		{"two names", mats("A", "aaa", "B", "bbb"), "bbb aaa", "<redacted:B> <redacted:A>"},
		{"repeated chars", mats("A", "aab"), "aaab", "a<redacted:A>"},
		{"repeated chars twice", mats("A", "aab"), "aaabaab aab", "a<redacted:A><redacted:A> <redacted:A>"},
		{"prefix values: longest wins", mats("S", "ab", "L", "abc"), "abc ab abd", "<redacted:L> <redacted:S> <redacted:S>d"},
		{"prefix values: order given does not matter", mats("L", "abc", "S", "ab"), "abc ab", "<redacted:L> <redacted:S>"},
		{"same value, first name shown", mats("FIRST", "dup", "SECOND", "dup"), "dup", "<redacted:FIRST>"},
		{"empty value ignored", mats("E", "", "A", "x"), "axa", "a<redacted:A>a"},
		{"overlap: leftmost wins", mats("A", "abc", "B", "cde"), "abcde", "<redacted:A>de"},
		{"partial at the end is text", mats("A", "secret"), "a secr", "a secr"},
		{"newline and unicode", mats("A", "line1\nzwölf ✓"), "[line1\nzwölf ✓]", "[<redacted:A>]"},
		{"one byte", mats("A", "z"), "zzz", "<redacted:A><redacted:A><redacted:A>"},
	} {
		if got := redactWrites(t, c.secrets, []byte(c.in)); got != c.want {
			t.Errorf("%s: %q -> %q, want %q", c.name, c.in, got, c.want)
		}
	}
}

// reference redacts s in one go, by the rule NewRedactor documents:
// leftmost, then longest, non-overlapping.
func reference(s string, secrets []Materialized) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		best := -1
		for k, m := range secrets {
			v := string(m.Value.Reveal())
			if v != "" && strings.HasPrefix(s[i:], v) && (best < 0 || len(v) > secrets[best].Value.Len()) {
				best = k
			}
		}
		if best < 0 {
			b.WriteByte(s[i])
			i++
			continue
		}
		b.WriteString("<redacted:" + secrets[best].Name + ">")
		i += secrets[best].Value.Len()
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
	}
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
