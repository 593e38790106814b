package scrub

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// chunked writes text to a new Stream of s in the pieces cuts makes of it
// (positions, ascending) and returns the output.
func chunked(t testing.TB, s *Set, text []byte, cuts []int) ([]byte, []Redaction) {
	t.Helper()
	var out bytes.Buffer
	st := s.NewStream(&out)
	last := 0
	for _, c := range append(cuts, len(text)) {
		if n, err := st.Write(text[last:c]); err != nil || n != c-last {
			t.Fatalf("Write: %d, %v", n, err)
		}
		last = c
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes(), st.Redactions()
}

// randomCase builds a Set of a few values, some short, some overlapping
// one another, and a text with their forms at random places, touching and
// overlapping, in between random filler.
func randomCase(r *rand.Rand) (*Set, []byte) {
	const alphabet = "ab01 \n/+=-_'\"<&%"
	word := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return b
	}
	s := NewSet()
	var forms [][]byte
	for i := range 1 + r.IntN(5) {
		v := word(3 + r.IntN(20))
		if len(forms) > 0 && r.IntN(3) == 0 { // overlap the previous value
			prev := forms[len(forms)-1]
			v = append(append([]byte(nil), prev[len(prev)/2:]...), v...)
		}
		if s.Add(string(rune('A'+i)), v) == nil {
			forms = append(forms, formsOf(v)...)
		}
	}
	var text []byte
	for range r.IntN(12) {
		text = append(text, word(r.IntN(6))...)
		if len(forms) > 0 {
			f := forms[r.IntN(len(forms))]
			if len(text) > 0 && r.IntN(4) == 0 { // overlap what is there
				text = text[:len(text)-r.IntN(min(len(text), len(f)))]
			}
			text = append(text, f...)
		}
	}
	return s, text
}

// randomCuts cuts n bytes at random places.
func randomCuts(r *rand.Rand, n int) []int {
	var cuts []int
	for c := 0; n > 0 && c < n; {
		c += 1 + r.IntN(min(n, 1+r.IntN(40)))
		if c < n {
			cuts = append(cuts, c)
		}
	}
	return cuts
}

// TestAnyChunkingGivesTheWholeOutput: random texts with values embedded in
// their forms, cut at random places and at every single byte, give the
// output and the counts of the text written whole.
func TestAnyChunkingGivesTheWholeOutput(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 12))
	for i := range 3000 {
		s, text := randomCase(r)
		whole, wantRs := s.Scrub(text)
		every := make([]int, 0, len(text))
		for c := 1; c < len(text); c++ {
			every = append(every, c)
		}
		for _, cuts := range [][]int{randomCuts(r, len(text)), randomCuts(r, len(text)), every} {
			got, rs := chunked(t, s, text, cuts)
			if !bytes.Equal(got, whole) || !equalRedactions(rs, wantRs) {
				t.Fatalf("case %d: text %q cut at %v:\n got %q %v\nwant %q %v", i, text, cuts, got, rs, whole, wantRs)
			}
		}
	}
}

func equalRedactions(a, b []Redaction) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// FuzzStreamEqualsWhole: any text, any values, any cuts: the chunked
// output is the whole one.
func FuzzStreamEqualsWhole(f *testing.F) {
	f.Add([]byte("xxxSECRET and SECRETxxxS"), []byte("xxxS"), []byte("SECRET"), uint64(7))
	f.Add([]byte("aaaaaaaaaa"), []byte("aaaa"), []byte("aaaaaaa"), uint64(1))
	f.Add([]byte("c2VjcmV0LXZhbHVl"), []byte("secret-value"), []byte("value"), uint64(3))
	f.Fuzz(func(t *testing.T, text, v1, v2 []byte, seed uint64) {
		s := NewSet()
		_ = s.Add("A", v1)
		_ = s.Add("B", v2)
		whole, wantRs := s.Scrub(text)
		r := rand.New(rand.NewPCG(seed, 0))
		got, rs := chunked(t, s, text, randomCuts(r, len(text)))
		if !bytes.Equal(got, whole) || !equalRedactions(rs, wantRs) {
			t.Fatalf("got %q %v, want %q %v", got, rs, whole, wantRs)
		}
	})
}

// failWriter fails every write.
type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	w.n++
	return 0, errors.New("broken pipe")
}

// TestWriterErrorSticks: the writer's error is Write's, and every later
// Write's and Close's; nothing is written after it.
func TestWriterErrorSticks(t *testing.T) {
	s := NewSet()
	if err := s.Add("K", []byte("s3cret-value")); err != nil {
		t.Fatal(err)
	}
	w := &failWriter{}
	st := s.NewStream(w)
	long := strings.Repeat("text ", 100)
	if _, err := st.Write([]byte(long)); err == nil {
		t.Fatal("Write succeeded on a failing writer")
	}
	if _, err := st.Write([]byte(long)); err == nil || st.Close() == nil || w.n != 1 {
		t.Errorf("later calls: %v, writes %d", err, w.n)
	}
}

// TestWriteAfterClose fails, and a second Close does nothing.
func TestWriteAfterClose(t *testing.T) {
	var b bytes.Buffer
	st := NewSet().NewStream(&b)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Write([]byte("x")); err == nil || st.Close() != nil {
		t.Errorf("write after close: %v", err)
	}
}

// writes writes each of chunks to st and returns what w holds after each.
func writes(t *testing.T, st *Stream, w *bytes.Buffer, chunks ...string) []string {
	t.Helper()
	var got []string
	for _, c := range chunks {
		if _, err := st.Write([]byte(c)); err != nil {
			t.Fatal(err)
		}
		got = append(got, w.String())
	}
	return got
}

// TestHoldsBackOnlyWhatCouldStartAForm: a Stream passes on at once every
// byte that no form could start in, and holds back the rest until the
// next write (or Close) decides it.
func TestHoldsBackOnlyWhatCouldStartAForm(t *testing.T) {
	const v = "k-CANARY-value"
	cases := []struct {
		name   string
		values []string
		chunks []string
		want   []string // what the writer holds after each write
	}{
		{"a line no form starts in", []string{"K", v},
			[]string{"ready\n"},
			[]string{"ready\n"}},
		{"a prefix of the value is held, then redacted",
			[]string{"K", v},
			[]string{"token: k-CAN", "ARY-value done\n"},
			[]string{"token: ", "token: <redacted:K> done\n"}},
		{"a prefix that is not the value is released by the next write",
			[]string{"K", v},
			[]string{"token: k-CAN", "DID\n"},
			[]string{"token: ", "token: k-CANDID\n"}},
		{"a short value at the end waits for its neighbour",
			[]string{"S", "k9!z"},
			[]string{"pin k9!z", "\n"},
			[]string{"pin ", "pin <redacted:S>\n"}},
		{"a short value followed by a letter is text",
			[]string{"S", "k9!z"},
			[]string{"pin k9!z", "q\n"},
			[]string{"pin ", "pin k9!zq\n"}},
		{"a line after a whole value is released at once",
			[]string{"K", v},
			[]string{"got " + v + "\nready\n"},
			[]string{"got <redacted:K>\nready\n"}},
		{"a whole value at the end waits: one touching it joins its placeholder",
			[]string{"K", v, "L", "second-value"},
			[]string{"got " + v, "second-value\n"},
			[]string{"got ", "got <redacted:K+L>\n"}},
	}
	for _, tc := range cases {
		s := mustSet(t, tc.values...)
		var out bytes.Buffer
		st := s.NewStream(&out)
		got := writes(t, st, &out, tc.chunks...)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: the writer held %q, want %q", tc.name, got, tc.want)
		}
		_ = st.Close()
		if whole, _ := s.Scrub([]byte(strings.Join(tc.chunks, ""))); out.String() != string(whole) {
			t.Errorf("%s: closed %q, whole %q", tc.name, out.String(), whole)
		}
	}
}

// TestWriteAllocatesNothing: once its buffers have grown, a Stream's
// Write allocates nothing, whether it holds bytes back or not.
func TestWriteAllocatesNothing(t *testing.T) {
	const v = "k-CANARY-value"
	s := mustSet(t, "K", v)
	st := s.NewStream(io.Discard)
	chunks := [][]byte{[]byte("a line of text, then " + v + "\n"), []byte("a prefix: k-CAN"), []byte("ARY-value!\n")}
	write := func() {
		for _, c := range chunks {
			_, _ = st.Write(c)
		}
	}
	write()
	if n := testing.AllocsPerRun(100, write); n != 0 {
		t.Errorf("%v allocations a round of writes", n)
	}
}

// TestCutDropsAPartialValue: a text cut through a value lets none of the
// value's first bytes out, where Close (the text ended) passes them on as
// text; a value whole before the cut is redacted either way.
func TestCutDropsAPartialValue(t *testing.T) {
	set := NewSet()
	const v = "s3cr3t-canary-value-0123456789"
	if err := set.Add("ci/token", []byte(v)); err != nil {
		t.Fatal(err)
	}
	text := []byte("head " + v + " mid " + v[:12])
	closed, _ := set.Scrub(text)
	if !bytes.HasSuffix(closed, []byte(v[:12])) {
		t.Fatalf("control: Close passed on %q, want the partial value at its end", closed)
	}
	cut, rs := set.ScrubCut(text)
	if want := "head <redacted:ci/token> mid "; string(cut) != want {
		t.Errorf("ScrubCut = %q, want %q", cut, want)
	}
	if len(rs) != 1 || rs[0].Count != 1 {
		t.Errorf("redactions %v, want one of ci/token", rs)
	}
	open, _ := set.ScrubCut([]byte("x " + v))
	if string(open) != "x <redacted:ci/token>" {
		t.Errorf("a value whole at the cut: %q", open)
	}
}
