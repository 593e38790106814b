package scrub

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

// naive finds every occurrence of every form at every position.
func naive(forms []form, text []byte) []match {
	var ms []match
	for _, f := range forms {
		for p := 0; p+len(f.b) <= len(text); p++ {
			if bytes.Equal(text[p:p+len(f.b)], f.b) && (!f.boundary || apart(text, p, p+len(f.b), -1)) {
				ms = append(ms, match{start: p, end: p + len(f.b), value: f.value})
			}
		}
	}
	return ms
}

func sortMatches(ms []match) {
	slices.SortFunc(ms, func(a, b match) int {
		if a.start != b.start {
			return a.start - b.start
		}
		if a.end != b.end {
			return a.end - b.end
		}
		return a.value - b.value
	})
}

// TestMatcherFindsWhatANaiveSearchFinds: for random Sets (values of 4 to
// 40 bytes, so every tier and gram length) and texts with their forms
// planted, the matcher finds exactly the occurrences a search of every
// form at every position finds.
func TestMatcherFindsWhatANaiveSearchFinds(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 8))
	for i := range 2000 {
		s, text := randomCase(r)
		if r.IntN(2) == 0 { // a longer value too, planted in some form
			v := randomBytes(r, 16+r.IntN(25))
			_ = s.Add("long", v)
			fs := formsOf(v)
			at := r.IntN(len(text) + 1)
			text = slices.Concat(text[:at], fs[r.IntN(len(fs))], text[at:])
		}
		m, _, _ := s.snapshot()
		got := m.find(nil, text, 0, len(text), -1)
		want := naive(m.forms, text)
		sortMatches(got)
		sortMatches(want)
		if !slices.Equal(got, want) {
			t.Fatalf("case %d: text %q: found %v, want %v", i, text, got, want)
		}
	}
}
