package trail

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/arca-secrets/arca/audit"
)

// decoded is what the index needs of line as encoding/json reads it: the
// reading readFacts must agree with, accepting and refusing the same
// lines.
func decoded(line []byte) (facts, bool) {
	var e audit.Event
	if json.Unmarshal(line, &e) != nil {
		return facts{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, e.TS)
	if err != nil {
		return facts{}, false
	}
	b := func(s string) []byte { return []byte(s) }
	return facts{ts: t.UnixNano(), event: b(e.Event), op: b(e.Op), outcome: b(e.Outcome), actor: b(e.Actor), env: b(e.Env), ref: b(e.Ref),
		user: b(e.User), host: b(e.Host), source: b(e.Source)}, true
}

func sameFacts(a, b facts) bool {
	eq := func(x, y []byte) bool { return string(x) == string(y) }
	return a.ts == b.ts && eq(a.event, b.event) && eq(a.op, b.op) && eq(a.outcome, b.outcome) && eq(a.actor, b.actor) &&
		eq(a.env, b.env) && eq(a.ref, b.ref) && eq(a.user, b.user) && eq(a.host, b.host) && eq(a.source, b.source)
}

// factLines are the lines both readings are held to: arca's own, and
// every way a line can differ from it.
var factLines = []string{
	`{"v":1,"ts":"2026-12-01T00:00:00.000000001Z","seq":1,"event":"get","op":"get","outcome":"ok","actor":"agent-7","env":"prod","ref":"app/db","version":3,"user":"ana","host":"laptop","source":"cli"}`,
	`{"v":1,"ts":"2026-12-01T00:00:00.5Z","seq":2,"event":"denied","op":"get","outcome":"denied","id":{"a":[1,"x"]},"ref":"billing/card","code":"denied","message":"denied by policy: \"no\"","policy":{"allow":false,"reason":"no \u00e9"},"source":"serve","prev":"00"}`,
	`{"v":1,"ts":"2026-12-01T00:00:00.000000000+01:00","seq":3,"event":"start","source":"serve"}`,
	`{"v":1,"ts":"2026-13-01T00:00:00.000000000Z","seq":3,"event":"start","source":"serve"}`,
	`{"v":1,"ts":"2026-02-30T00:00:00.000000000Z","seq":3,"event":"start","source":"serve"}`,
	`{"v":1,"ts":"not a time","seq":1,"event":"get","source":"cli"}`,
	`{"v":1,"seq":1,"event":"get","source":"cli"}`,
	`{"v":1,"ts":"2026-12-01T00:00:00.000000000Z","seq":1,"event":"get","Env":"prod","source":"cli"}`,
	`{"v":1,"ts":"2026-12-01T00:00:00.000000000Z","seq":1,"event":"get","env":"prod","ENV":"dev","source":"cli"}`,
	`{"v":1,"ts":"2026-12-01T00:00:00.000000000Z","seq":1,"event":"get","\u0065nv":"prod","source":"cli"}`,
	`{"v":1,"ts":"2026-12-01T00:00:00.000000000Z","seq":1,"event":"get","env":null,"source":"cli"}`,
	`{"v":1,"ts":"2026-12-01T00:00:00.000000000Z","seq":1,"event":"get","env":7,"source":"cli"}`,
	`{"v":1,"ts":"2026-12-01T00:00:00.000000000Z","seq":"1","event":"get","source":"cli"}`,
	`{"v":1,"ts":"2026-12-01T00:00:00.000000000Z","seq":-1,"event":"get","source":"cli"}`,
	`{"v":1,"ts":"2026-12-01T00:00:00.000000000Z","seq":01,"event":"get","source":"cli"}`,
	`{"v":1.5,"ts":"2026-12-01T00:00:00.000000000Z","seq":1,"event":"get","source":"cli"}`,
	`{"v":1,"ts":"2026-12-01T00:00:00.000000000Z","seq":99999999999999999999,"event":"get","source":"cli"}`,
	`{"v":1,"ts":"2026-12-01T00:00:00.000000000Z","seq":1,"event":"get","policy":{"allow":"yes"},"source":"cli"}`,
	`{"v":1,"ts":"2026-12-01T00:00:00.000000000Z","seq":1,"event":"get","policy":[1],"source":"cli"}`,
	`{"v":1,"ts":"2026-12-01T00:00:00.000000000Z","seq":1,"event":"get","id":{"a":},"source":"cli"}`,
	`{"v":1,"ts":"2026-12-01T00:00:00.000000000Z","seq":1,"event":"get","id":tru,"source":"cli"}`,
	`{"v":1,"ts":"2026-12-01T00:00:00.000000000Z","seq":1,"event":"get","ref":"a\x01b","source":"cli"}`,
	`{"v":1,"ts":"2026-12-01T00:00:00.000000000Z","seq":1,"event":"get","ref":"caf\xc3\xa9 \xff","source":"cli"}`,
	`{"v":1,"ts":"2026-12-01T00:00:00.000000000Z","seq":1,"event":"get","source":"cli"} `,
	`{"v":1,"ts":"2026-12-01T00:00:00.000000000Z","seq":1,"event":"get","source":"cli"}{}`,
	`{"v":1,"ts":"2026-12-01T00:00:00.000000000Z","seq":1,"event":"get","source":"cli",}`,
	`{"v":1,"ts":"2026-12-01T00:00:00.000000000Z","seq":1,"event":"get","source":"cli"`,
	` { "v" : 1 , "ts" : "2026-12-01T00:00:00.000000000Z" , "seq" : 1 , "event" : "get" , "source" : "cli" } `,
	`{"v":1,"ts":"2026-12-01T00:00:00.000000000Z","seq":1,"event":"get","status":-3,"exit_code":null,"source":"cli"}`,
	`{"v":1,"ts":"2026-12-01T00:00:00.000000000Z","seq":1,"event":"get","approval":{"id":"ap_1","uses":2},"source":"cli"}`,
	`{"v":1,"ts":"2026-12-01T00:00:00.000000000Z","seq":1,"event":"get","approval":{"id":3},"source":"cli"}`,
	`[1]`, `{}`, ``, `"x"`, `{"ts":}`,
}

// TestReadFactsAgreesWithTheDecoder holds readFacts to encoding/json:
// every line one accepts the other does, with the same strings and time.
func TestReadFactsAgreesWithTheDecoder(t *testing.T) {
	for _, line := range factLines {
		checkFacts(t, []byte(line))
	}
}

func checkFacts(t *testing.T, line []byte) {
	t.Helper()
	want, ok := decoded(line)
	got, err := readFacts(line)
	switch {
	case ok && err != nil:
		t.Errorf("%q: refused (%v); encoding/json reads it", line, err)
	case !ok && err == nil:
		t.Errorf("%q: read; encoding/json refuses it", line)
	case ok && !sameFacts(got, want):
		t.Errorf("%q: read as %+v, encoding/json as %+v", line, got, want)
	}
}

func FuzzReadFacts(f *testing.F) {
	for _, line := range factLines {
		f.Add([]byte(line))
	}
	f.Fuzz(func(t *testing.T, line []byte) { checkFacts(t, line) })
}
