package approvalpage

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Whatever the body, readDecision does not panic, and a decision it takes
// is a deny of no scope or a grant in bounds, from one JSON object.
func FuzzReadDecision(f *testing.F) {
	for _, seed := range []string{
		grant3, `{"decision":"deny"}`, `{"decision":"grant","scope":{"uses":10000,"ttl_s":86400}}`,
		`{"Decision":"deny"}`, `{"decision":"grant","decision":"deny"}`, `{"decision":"grant","scope":{"uses":1e3,"ttl_s":0}}`,
		`{"decision":"grant","scope":{"uses":3,"ttl_s":0,"uses":9}}`, `{"decision":"grant","scope":[1,2]}`, `[[[[[[]]]]]]`,
		`{"decision":"grant","scope":{"uses":3,"ttl_s":0}} `, `{"decision":"deny"}{}`, `{"decision":"\u0064eny"}`, "",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		r := httptest.NewRequest("POST", "/approvals/"+idPending, strings.NewReader(body))
		d, status, err := readDecision(httptest.NewRecorder(), r)
		if err != nil {
			if status != http.StatusBadRequest && status != http.StatusRequestEntityTooLarge {
				t.Fatalf("%q: status %d", body, status)
			}
			return
		}
		if len(body) > MaxBody {
			t.Fatalf("a body of %d bytes taken", len(body))
		}
		if !d.Grant && d.Scope != (Scope{}) || d.Scope.Uses < 0 || d.Scope.Uses > MaxUses || d.Scope.TTLSeconds < 0 || d.Scope.TTLSeconds > MaxTTL {
			t.Fatalf("%q: taken as %+v", body, d)
		}
		var v map[string]any
		if json.Unmarshal([]byte(body), &v) != nil || len(v) == 0 || len(v) > 2 {
			t.Fatalf("%q: taken, but encoding/json reads it as %v", body, v)
		}
	})
}
