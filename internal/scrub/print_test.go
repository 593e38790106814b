package scrub

import (
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
)

// TestNothingPrintsAValue: every verb of fmt, on every exported type, a
// pointer to it and a struct holding it, and every error, shows no byte
// of a value or of a form of it, even with the value held back or inside
// an open union.
func TestNothingPrintsAValue(t *testing.T) {
	const canary = "canary-5e1f0a2b-value"
	s := mustSet(t, "K", canary)
	st := s.NewStream(&strings.Builder{})
	_, _ = st.Write([]byte("before " + canary[:10])) // held back
	held := s.NewStream(&strings.Builder{})
	_, _ = held.Write([]byte(canary)) // an open union
	things := map[string]any{
		"set": *s, "*set": s, "stream": *st, "*stream": st, "open": held,
		"in a struct": struct {
			S  *Set
			St *Stream
		}{s, st},
		"redactions": st.Redactions(),
	}
	verbs := []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%T"}
	for what, v := range things {
		for _, verb := range verbs {
			out := fmt.Sprintf(verb, v)
			for _, needle := range []string{canary, canary[:10], hex.EncodeToString([]byte(canary[:8])), "canary"} {
				if strings.Contains(strings.ToLower(out), strings.ToLower(needle)) {
					t.Errorf("%s %s printed %q", what, verb, out)
				}
			}
		}
	}
	if err := s.Add("K2", []byte(strings.Repeat(canary, 4000))); err == nil || strings.Contains(err.Error(), "canary") {
		t.Errorf("error %v", err)
	}
}
