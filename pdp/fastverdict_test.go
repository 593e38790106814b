package pdp

import (
	"reflect"
	"testing"
)

// fastSeeds are verdicts the fast path takes and ones it must hand on.
func fastSeeds() []string {
	return []string{
		`{"allow":true}`, `{"allow":false}`, ` {"allow" : true } `, "\t{\n\"allow\":false\r\n}\n",
		`{"allow":true,"reason":"ok","obligations":["log","mfa"]}`, `{"obligations":[],"reason":"","allow":false}`,
		`{"reason":"x","allow":true}`, `{"allow":true,"obligations":[ "a" , "b" ]}`,
		`{"allow":true,"allow":false}`, `{"allow":false,"allow":true}`, `{"reason":"x","reason":"y","allow":true}`,
		`{"allow":"true"}`, `{"allow":1}`, `{"allow":null}`, `{"reason":"trust me"}`, `{}`, ``, ` `, `[]`,
		`{"allow":true}{"allow":true}`, `{"allow":true},`, `{"allow":true`, `{"allow":tru}`, `{"allow":true,}`,
		`{,"allow":true}`, `{"allow":true "reason":"x"}`, `{"Allow":true,"allow":false}`, `{"allow":true,"x":1}`,
		`{"allow":true,"reason":"a\"b"}`, `{"allow":true,"reason":"\u00e9"}`, `{"allow":true,"reason":"é"}`,
		"{\"allow\":true,\"reason\":\"a\x00\"}", "{\"allow\":true,\"reason\":\"\xff\"}", `{"allow":true,"reason":null}`,
		`{"allow":true,"obligations":"log"}`, `{"allow":true,"obligations":["log",1]}`, `{"allow":true,"obligations":[,]}`,
		`{"allow":true,"obligations":["a",]}`, `{"allow":true,"obligations":[]]}`, `{"allow":true} x`, "{\"allow\":true}\x00",
		`{"allow":truefalse}`, `{"allow":true,"reason":"x"`, `{"allow" true}`, `{"allow":true,"obligations":null}`,
		`{"allow":true,"nonce":"0123456789abcdef0123456789abcdef"}`, `{"nonce":"n","allow":false,"reason":"r"}`,
		`{"allow":true,"nonce":""}`, `{"allow":true,"nonce":"a","nonce":"b"}`, `{"allow":true,"nonce":1}`,
		`{"allow":true,"nonce":null}`, `{"allow":true,"nonce":"\u0061"}`, `{"allow":true,"Nonce":"a"}`,
	}
}

func FuzzFastVerdict(f *testing.F) {
	for _, s := range fastSeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkFast(t, b) })
}

func TestFastVerdictAgreesWithTheDecoder(t *testing.T) {
	taken := 0
	for _, s := range fastSeeds() {
		if checkFast(t, []byte(s)) {
			taken++
		}
	}
	if taken < 11 {
		t.Errorf("the fast path took %d seeds, want the 11 plain verdicts", taken)
	}
}

// checkFast fails t if the fast path takes b with a verdict or a nonce the
// decoder would not give, as a spawned decider's verdict or as a persistent
// one's line, and reports whether it took b.
func checkFast(t *testing.T, b []byte) bool {
	t.Helper()
	fast, nonce, ok := fastVerdict(b)
	if !ok {
		return false
	}
	obj, why := oneObject(b)
	var slow Verdict
	if why == "" {
		var f fields
		if f, why = knownFields(obj); why == "" {
			slow, why = f.verdict()
		}
	}
	if why != "" || !reflect.DeepEqual(fast, slow) {
		t.Errorf("%q: fast path gave %+v, the decoder %+v %q", b, fast, slow, why)
	}
	echoed, slowNonce, why := decodeEcho(b)
	if why != "" || !reflect.DeepEqual(fast, echoed) || string(nonce) != string(slowNonce) {
		t.Errorf("%q: fast path gave %+v nonce %q, the decoder %+v nonce %q %q", b, fast, nonce, echoed, slowNonce, why)
	}
	return true
}
