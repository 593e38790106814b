package pdp

import (
	"encoding/json"
	"reflect"
	"strings"
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

// TestParseEcho: a persistent line is a verdict as parseVerdict reads it,
// and its nonce, a string given once, is returned for the caller to match;
// a spawned decider's verdict ignores the key as any other.
func TestParseEcho(t *testing.T) {
	for _, c := range verdictCases {
		v, nonce, why := parseEcho([]byte(c.in))
		wantV, wantWhy := parseVerdict([]byte(c.in))
		if why != wantWhy || !reflect.DeepEqual(v, wantV) || len(nonce) != 0 {
			t.Errorf("%q: parseEcho gave %+v %q %q, parseVerdict %+v %q", c.in, v, nonce, why, wantV, wantWhy)
		}
	}
	const n = "0123456789abcdef0123456789abcdef"
	for _, c := range []struct {
		in       string
		want     *Verdict // nil: unusable
		nonce    string
		why      string
		spawnWhy string // parseVerdict's why for the same bytes
	}{
		{`{"allow":true,"nonce":"` + n + `"}`, &Verdict{Allow: true}, n, "", ""},
		{`{"nonce":"` + n + `","allow":false,"reason":"no"}`, &Verdict{Reason: "no"}, n, "", ""},
		{`{"allow":true,"nonce":"\u0061"}`, &Verdict{Allow: true}, "a", "", ""},
		{`{"allow":true,"nonce":""}`, &Verdict{Allow: true}, "", "", ""},
		{`{"allow":true,"Nonce":"a"}`, &Verdict{Allow: true}, "", "", ""},
		{`{"allow":true,"nonce":1}`, nil, "", "verdict nonce is not a string", ""},
		{`{"allow":true,"nonce":null}`, nil, "", "verdict nonce is not a string", ""},
		{`{"allow":true,"nonce":"a","nonce":"a"}`, nil, "", "verdict repeats key nonce", ""},
		{`{"allow":"yes","nonce":"a"}`, nil, "", "verdict has no boolean allow", "verdict has no boolean allow"},
	} {
		v, nonce, why := parseEcho([]byte(c.in))
		switch {
		case c.want == nil && (why != c.why || !reflect.DeepEqual(v, Verdict{}) || len(nonce) != 0):
			t.Errorf("%q: got %+v %q %q, want why %q", c.in, v, nonce, why, c.why)
		case c.want != nil && (why != "" || !reflect.DeepEqual(v, *c.want) || string(nonce) != c.nonce):
			t.Errorf("%q: got %+v %q %q, want %+v %q", c.in, v, nonce, why, *c.want, c.nonce)
		}
		if _, why := parseVerdict([]byte(c.in)); why != c.spawnWhy {
			t.Errorf("%q as a spawned verdict: why %q, want %q", c.in, why, c.spawnWhy)
		}
	}
}

// TestEchoProblem: a line answers the request whose nonce it echoes, and
// nothing else.
func TestEchoProblem(t *testing.T) {
	for _, c := range []struct{ got, want, last, why string }{
		{"n2", "n2", "n1", ""},
		{"", "n2", "n1", "verdict does not echo the request's nonce"},
		{"n1", "n2", "n1", "verdict echoes the nonce of an earlier request (a stale line)"},
		{"n3", "n2", "n1", "verdict echoes a nonce that is not its request's"},
		{"N2", "n2", "", "verdict echoes a nonce that is not its request's"},
		{"", "n1", "", "verdict does not echo the request's nonce"},
	} {
		if why := echoProblem([]byte(c.got), c.want, c.last); why != c.why {
			t.Errorf("echo %q for %q after %q: %q, want %q", c.got, c.want, c.last, why, c.why)
		}
	}
}

// TestNonce: each request gets a fresh 16-byte nonce in hex, the last key
// of its line.
func TestNonce(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		n := newNonce()
		if len(n) != 32 || strings.Trim(n, "0123456789abcdef") != "" || seen[n] {
			t.Fatalf("nonce %q (seen before: %v)", n, seen[n])
		}
		seen[n] = true
	}
	b, err := encodeRequest(persistentRequest{getReq, "ab"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"actor":"agent:ci","op":"get","env":"prod","ref":"ns/name","nonce":"ab"}` + "\n"; string(b) != want {
		t.Errorf("request line %s, want %s", b, want)
	}
}
