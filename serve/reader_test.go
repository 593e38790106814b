package serve

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// TestLineReady: the reader says a line is ready only when a whole one is
// buffered, so serve flushes before every read that could block.
func TestLineReady(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     []bool // lineReady before each call to next, the last at EOF
	}{
		{"nothing read yet", "a\n", []bool{false}},
		{"whole lines buffered", "a\nb\nc\n", []bool{false, true, true, false}},
		{"partial last line", "a\nb", []bool{false, false}},
		{"blank lines count", "a\n\n", []bool{false, true, false}},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := newLineReader(strings.NewReader(c.in), 64)
			for i, want := range c.want {
				if got := l.lineReady(); got != want {
					t.Errorf("before read %d: lineReady() = %v, want %v", i+1, got, want)
				}
				if _, err := l.next(); err != nil && !errors.Is(err, io.EOF) {
					t.Fatalf("read %d: %v", i+1, err)
				}
			}
		})
	}
}
