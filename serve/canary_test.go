package serve

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

func hashOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TestCanary stores a known value with a known attestation, runs every op
// and every way to fail with them, and holds the outputs to SPEC §8: the
// value reaches stdout only in get results and never stderr; the
// attestation reaches neither, its SHA-256 is on every event ops wrote.
func TestCanary(t *testing.T) {
	const (
		value = "CANARY-serve-8d1f"
		att   = "ATTEST-CANARY-77"
	)
	f := newFixture(t)
	a := `"attestation":"` + att + `"`
	v := `"value":"` + value + `"`
	in := lines(
		`{"id":1,"op":"put","ref":"arca://app/canary",`+v+`,`+a+`,"actor":"agent:test"}`,
		`{"id":2,"op":"get","ref":"arca://app/canary",`+a+`}`,
		`{"id":3,"op":"list",`+a+`}`,
		`{"id":4,"op":"check",`+a+`}`,
		`{"id":5,"op":"rotate","ref":"arca://app/canary",`+v+`,`+a+`}`,
		`{"id":6,"op":"get","ref":"arca://default/app/canary",`+a+`}`,
		`{"id":7,"op":"manifest",`+a+`}`,
		`{"id":8,"op":"put","ref":"not a ref",`+v+`,`+a+`}`,
		`{"id":9,"op":"put","ref":"arca://app/canary","env":"zzz",`+v+`,`+a+`}`,
		`{"id":10,"op":"rotate","ref":"arca://app/missing",`+v+`,`+a+`}`,
		`{"id":11,"op":"put","ref":"arca://app/canary","actor":"bad\u0001actor",`+v+`,`+a+`}`,
		`{"id":12,"op":"put","ref":"arca://app/c2","value":"CANARY-serve-\u0038d1f",`+a+`}`, // the value spelled with an escape
		`{"id":13,"op":"get","ref":"arca://app/c2",`+a+`}`,
		`{"id":14,"op":"rm","ref":"arca://app/canary",`+a+`}`,
		`{"id":15,"op":"get","ref":"arca://app/canary",`+a+`}`,
		// Refused before ops.
		`{"id":16,"op":"get","ref":"arca://app/c2",`+v+`,`+a+`}`,
		`{"id":17,"op":"nope",`+v+`,`+a+`}`,
		`{"id":18,"op":"list","x":"`+value+`","y":"`+att+`"}`,
		`{"id":19,"op":"put","ref":"arca://app/c2","value":"`+value+strings.Repeat("x", 70000)+`",`+a+`}`,
		`{"id":20,"op":"list","actor":"`+att+strings.Repeat("x", 300)+`"}`,
		`{"id":21,"op":"put","ref":"arca://app/c2",`+v+`,`+a+`,"value":"`+value+`"}`,
		`{"id":22,"op":"put","ref":"arca://app/c2",`+v+`,`+a+`} trailing`,
		`{"id":23,"op":"shutdown",`+a+`}`,
	)
	// holdsValue and holdsAtt are the checks on both streams; each also
	// looks for the canary's prefix, which a spelling split by an escape
	// keeps. The get replies, which must hold the value, are holdsValue's
	// positive control; the request lines, which hold both, are the two
	// checks'.
	holdsValue := func(b []byte) bool {
		return strings.Contains(string(b), value) || strings.Contains(string(b), "CANARY-serve")
	}
	holdsAtt := func(b []byte) bool {
		return strings.Contains(string(b), att) || strings.Contains(string(b), "ATTEST-CANARY")
	}
	if !holdsValue([]byte(in)) || !holdsAtt([]byte(in)) {
		t.Fatalf("the checks miss the canary in the requests that carry it")
	}
	tr := f.serve(t, in)
	gets := map[string]bool{"2": true, "6": true, "13": true}
	ws := []want{}
	for i, code := range []string{"", "", "", "", "", "", "", "bad_request", "bad_request", "not_found", "bad_request", "", "", "", "not_found",
		"bad_request", "unknown_op", "bad_request", "bad_request", "bad_request", "bad_request", "bad_request", ""} {
		w := want{code: code, not: []string{value, att}}
		if i < 20 {
			w.id = strings.TrimSpace(strings.Split(strings.TrimPrefix(strings.Split(in, "\n")[i], `{"id":`), ",")[0])
		}
		ws = append(ws, w)
	}
	checkReplies(t, tr, ws)

	if holdsValue(tr.rawErr) {
		t.Errorf("the value reached stderr:\n%s", tr.rawErr)
	}
	if holdsAtt(tr.rawErr) {
		t.Errorf("the attestation reached stderr:\n%s", tr.rawErr)
	}
	if holdsAtt(tr.rawOut) {
		t.Errorf("the attestation reached stdout:\n%s", short(string(tr.rawOut)))
	}
	for _, r := range tr.responses(t) {
		holds := holdsValue(r.Result)
		if gets[string(r.ID)] != holds {
			t.Errorf("reply %s holds the value: %v", r.ID, holds)
		}
		if strings.Contains(r.message(), "CANARY") {
			t.Errorf("reply %s: the message echoes the value: %q", r.ID, r.message())
		}
	}
	sum := hashOf(att)
	if !strings.Contains(string(tr.rawErr), sum) {
		t.Fatalf("the attestation's SHA-256 %s is not on stderr", sum)
	}
	for i, e := range tr.requestEvents(t) {
		if 16 <= i+1 && i+1 <= 22 {
			continue // refused by serve before ops: see TestRefusalsRecordAttestationHash
		}
		if e.AttestationSHA256 != sum {
			t.Errorf("event for id %s has attestation_sha256 %q, want %s", e.ID, e.AttestationSHA256, sum)
		}
	}
}
