package upstream

import (
	"net/http"
	"testing"
)

// TestEncoded: a response in any content encoding but identity is one
// scrub cannot see into.
func TestEncoded(t *testing.T) {
	for _, c := range []struct {
		vals []string
		want bool
	}{
		{nil, false}, {[]string{"identity"}, false}, {[]string{"Identity"}, false}, {[]string{""}, false},
		{[]string{"gzip"}, true}, {[]string{"br"}, true}, {[]string{"identity, gzip"}, true},
		{[]string{"identity", "deflate"}, true}, {[]string{" x-anything "}, true},
	} {
		h := http.Header{"Content-Encoding": c.vals}
		if got := encoded(h); got != c.want {
			t.Errorf("encoded(%q) = %v, want %v", c.vals, got, c.want)
		}
	}
}
