package pdp

import (
	"encoding/json"
	"reflect"
	"testing"
)

// verdictCases are parse cases that need no child; the rows in pdp_test.go
// run the important ones through real processes.
var verdictCases = []struct {
	in   string
	want *Verdict // nil: unusable
	why  string
}{
	{`{"allow":true}`, &Verdict{Allow: true}, ""},
	{`{"allow":false,"reason":"r","obligations":["a","b"]}`, &Verdict{Reason: "r", Obligations: []string{"a", "b"}}, ""},
	{`{"allow":true,"obligations":[]}`, &Verdict{Allow: true}, ""},
	{`{"\u0061llow":true}`, &Verdict{Allow: true}, ""},
	{`{"allow":true,"reason":"\u00e9\n"}`, &Verdict{Allow: true, Reason: "é\n"}, ""},
	{"\t{ \"allow\" : true }\r\n", &Verdict{Allow: true}, ""},
	{`{"x":1,"x":2,"allow":true}`, &Verdict{Allow: true}, ""},
	{``, nil, "verdict is empty"},
	{" \n", nil, "verdict is empty"},
	{`nope`, nil, "verdict is not JSON"},
	{`{"allow":true,}`, nil, "verdict is not JSON"},
	{`"allow"`, nil, "verdict is not a JSON object"},
	{`true`, nil, "verdict is not a JSON object"},
	{`null`, nil, "verdict is not a JSON object"},
	{`{"allow":true} x`, nil, "verdict has data after the JSON object"},
	{`{"allow":true} {}`, nil, "verdict has data after the JSON object"},
	{`{"allow":true}]`, nil, "verdict has data after the JSON object"},
	{`{}`, nil, "verdict has no boolean allow"},
	{`{"allow":"false"}`, nil, "verdict has no boolean allow"},
	{`{"allow":[true]}`, nil, "verdict has no boolean allow"},
	{`{"ALLOW":true}`, nil, "verdict has no boolean allow"},
	{`{"allow":true,"allow":true}`, nil, "verdict repeats key allow"},
	{`{"allow":true,"reason":"a","reason":"b"}`, nil, "verdict repeats key reason"},
	{`{"allow":true,"obligations":[],"obligations":[]}`, nil, "verdict repeats key obligations"},
	{`{"allow":true,"reason":null}`, nil, "verdict reason is not a string"},
	{`{"allow":true,"reason":1}`, nil, "verdict reason is not a string"},
	{`{"allow":true,"obligations":null}`, nil, "verdict obligations is not an array of strings"},
	{`{"allow":true,"obligations":["a",null]}`, nil, "verdict obligations is not an array of strings"},
	{`{"allow":true,"obligations":[["a"]]}`, nil, "verdict obligations is not an array of strings"},
	{`{"allow":true,"obligations":{"a":"b"}}`, nil, "verdict obligations is not an array of strings"},
}

// knownWhys are every cause parseVerdict may report: fixed text, never the
// verdict's own.
var knownWhys = map[string]bool{
	"verdict is empty": true, "verdict is not JSON": true, "verdict is not a JSON object": true,
	"verdict has data after the JSON object": true, "verdict has no boolean allow": true,
	"verdict repeats key allow": true, "verdict repeats key reason": true, "verdict repeats key obligations": true,
	"verdict reason is not a string": true, "verdict obligations is not an array of strings": true,
}

func TestParseVerdict(t *testing.T) {
	for _, c := range verdictCases {
		v, why := parseVerdict([]byte(c.in))
		switch {
		case c.want == nil && why != c.why:
			t.Errorf("%q: why = %q, want %q", c.in, why, c.why)
		case c.want != nil && (why != "" || !reflect.DeepEqual(v, *c.want)):
			t.Errorf("%q: got %+v (%q), want %+v", c.in, v, why, *c.want)
		}
	}
}

// FuzzParseVerdict: never a panic, and whatever is accepted is one JSON
// object whose allow is the boolean the verdict reports.
func FuzzParseVerdict(f *testing.F) {
	for _, c := range verdictCases {
		f.Add([]byte(c.in))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, why := parseVerdict(b)
		if why != "" {
			if !reflect.DeepEqual(v, Verdict{}) {
				t.Fatalf("unusable verdict %q still returned %+v", b, v)
			}
			if !knownWhys[why] {
				t.Fatalf("why %q for %q is not one of the fixed causes", why, b)
			}
			return
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("accepted %q, which is not one JSON object: %v", b, err)
		}
		if allow, ok := m["allow"].(bool); !ok || allow != v.Allow {
			t.Fatalf("accepted %q with allow=%v", b, v.Allow)
		}
	})
}
