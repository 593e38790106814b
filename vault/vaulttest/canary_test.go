package vaulttest

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"testing"
)

// errorRecorder is a testing.TB that keeps failures instead of failing.
type errorRecorder struct {
	testing.TB
	errors []string
}

func (r *errorRecorder) Helper() {}

func (r *errorRecorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// WantNoCanary's positive control: the name and the value, plain, in hex
// and in base64 (either alphabet) at every offset inside a longer string,
// each trip it; the same text without them does not.
func TestWantNoCanaryCatchesALeak(t *testing.T) {
	for _, c := range []string{CanaryName, CanaryValue} {
		texts := map[string]string{"plain": "x" + c + "y", "hex": hex.EncodeToString([]byte("x" + c))}
		for pad := range 3 {
			b := []byte("xyz"[:pad] + c + "!")
			texts[fmt.Sprintf("base64 at offset %d", pad)] = base64.StdEncoding.EncodeToString(b)
			texts[fmt.Sprintf("base64url at offset %d", pad)] = base64.URLEncoding.EncodeToString(b)
		}
		for how, text := range texts {
			r := &errorRecorder{TB: t}
			WantNoCanary(r, how, text)
			if len(r.errors) == 0 {
				t.Errorf("WantNoCanary passed %s as %s: %q", c, how, text)
			}
		}
	}
	r := &errorRecorder{TB: t}
	WantNoCanary(r, "no canary", "canary CANARY "+base64.StdEncoding.EncodeToString([]byte("CANARY-")))
	if len(r.errors) != 0 {
		t.Errorf("WantNoCanary failed a text without the canary: %q", r.errors)
	}
}
