package growth

import (
	"testing"
)

var sink int

// work is an op whose cost grows linearly with n.
func work(n int) func() {
	return func() {
		for i := range n {
			sink += i
		}
	}
}

// Measure reports each side and their ratio, large over small: an op a
// hundred times the work of the other comes out far above 1, and the same
// op at both sides near it.
func TestMeasure(t *testing.T) {
	r := testing.Benchmark(func(b *testing.B) {
		Measure(b, "sum", 10, Size{"1000", work(1_000)}, Size{"100000", work(100_000)})
	})
	small, large, ratio := r.Extra["ns/sum@1000"], r.Extra["ns/sum@100000"], r.Extra["100000/1000"]
	if small <= 0 || large <= 0 || ratio < 10 {
		t.Errorf("a hundred times the work: %v ns and %v ns, ratio %v; want both measured and a ratio above 10", small, large, ratio)
	}
	r = testing.Benchmark(func(b *testing.B) {
		Measure(b, "sum", 10, Size{"a", work(10_000)}, Size{"b", work(10_000)})
	})
	if ratio := r.Extra["b/a"]; ratio < 0.2 || ratio > 5 {
		t.Errorf("the same work at both sides: ratio %v, want near 1", ratio)
	}
}
