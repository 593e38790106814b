// Package growth holds a benchmark to the shape it claims: how an op's
// cost grows with a size (records in a vault, bytes in a file). A claim
// that a cost does not grow, or grows linearly, is a ratio of two sizes,
// so both are measured in one loop, in turns, and the ratio is reported
// beside them: whatever else the machine does meanwhile falls on both
// alike.
package growth

import (
	"testing"
	"time"
)

// Size is one side of a measure: the size it stands for, as the metrics
// name it ("10", "100000", "1MiB"), and one op at it. Op fails the
// benchmark itself.
type Size struct {
	Name string
	Op   func()
}

// Measure runs batch ops at small, then batch at large, each iteration of
// b's loop, timing each side apart. It reports the nanoseconds of one op
// at each size, as "ns/<what>@<Name>", and their ratio, large over small,
// as "<large.Name>/<small.Name>": about 1 for a cost that does not grow,
// about the ratio of the sizes for one that grows linearly. b's own ns/op
// is one iteration, both sides and their batches.
func Measure(b *testing.B, what string, batch int, small, large Size) {
	var at [2]time.Duration
	for b.Loop() {
		for i, s := range [2]Size{small, large} {
			start := time.Now()
			for range batch {
				s.Op()
			}
			at[i] += time.Since(start)
		}
	}
	ops := float64(b.N * batch)
	b.ReportMetric(float64(at[0].Nanoseconds())/ops, "ns/"+what+"@"+small.Name)
	b.ReportMetric(float64(at[1].Nanoseconds())/ops, "ns/"+what+"@"+large.Name)
	b.ReportMetric(float64(at[1])/float64(at[0]), large.Name+"/"+small.Name)
}
