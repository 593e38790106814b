package serve

import (
	"strings"
	"testing"
)

// TestSchemasAreNotVacuous makes sure the checker would catch a wrong line:
// a validator that accepts anything would make every other test pass.
func TestSchemasAreNotVacuous(t *testing.T) {
	sc := schemas(t)
	cases := []struct {
		name  string
		check func(any) error
		good  string
		bad   []string
	}{
		{"response", sc.response.Validate, `{"id":null,"ok":true,"result":{}}`, []string{
			`{"ok":true,"result":{}}`,
			`{"id":1,"ok":true,"result":{},"extra":1}`,
			`{"id":1,"ok":false,"error":{"code":"nope","message":"m"}}`,
			`{"id":1,"ok":false,"error":{"code":"op_error","message":"m"},"policy":{"allow":"yes"}}`,
		}},
		{"error", sc.errorResp.Validate, `{"id":1,"ok":false,"error":{"code":"bad_request","message":"m"}}`, []string{
			`{"id":1,"ok":true,"result":{}}`,
			`{"id":1,"ok":false,"error":{"code":"bad_request"}}`,
		}},
		{"event", sc.event.Validate, `{"v":1,"ts":"2026-01-02T03:04:05.000000006Z","seq":1,"event":"start","message":"m","source":"serve"}`, []string{
			`{"v":1,"ts":"2026-01-02T03:04:05Z","seq":1,"event":"start","message":"m","source":"serve"}`,
			`{"v":1,"ts":"2026-01-02T03:04:05.000000006Z","seq":1,"event":"start","id":1,"message":"m","source":"serve"}`,
			`{"v":1,"ts":"2026-01-02T03:04:05.000000006Z","seq":2,"event":"error","outcome":"error","source":"serve"}`,
			`{"v":1,"ts":"2026-01-02T03:04:05.000000006Z","seq":2,"event":"get","outcome":"ok","value":"x","source":"serve"}`,
		}},
		{"request", sc.request.Validate, `{"op":"get","ref":"arca://a/b"}`, []string{
			`{"op":"get"}`,
			`{"op":"get","ref":"arca://a/b","value":""}`,
			`{"op":"list","ref":"arca://a/b"}`,
			`{"op":"run"}`,
			`{"op":"list","Op":"list"}`,
		}},
		{"result get", sc.result["get"].Validate, `{"ref":"arca://a/b","env":"default","value":"v","version":1,"created_at":"2026-01-02T03:04:05.000000006Z","updated_at":"2026-01-02T03:04:05.000000006Z"}`, []string{
			`{"ref":"arca://a/b","env":"default","version":1,"created_at":"2026-01-02T03:04:05.000000006Z","updated_at":"2026-01-02T03:04:05.000000006Z"}`,
		}},
		{"result shutdown", sc.result["shutdown"].Validate, `{}`, []string{`{"x":1}`}},
	}
	for _, c := range cases {
		v, err := parseInstance([]byte(c.good))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.check(v); err != nil {
			t.Errorf("%s: good instance refused: %v", c.name, err)
		}
		for _, b := range c.bad {
			v, err := parseInstance([]byte(b))
			if err != nil {
				t.Fatal(err)
			}
			if c.check(v) == nil {
				t.Errorf("%s: bad instance accepted: %s", c.name, b)
			}
		}
	}
}

// TestEveryOp runs every served op once; the harness holds each reply to
// its op's result schema and each event to the event schema.
func TestEveryOp(t *testing.T) {
	f := newFixture(t)
	tr := f.serve(t, lines(
		`{"id":1,"op":"put","ref":"arca://app/db","value":"s3cret"}`,
		`{"id":2,"op":"get","ref":"arca://app/db"}`,
		`{"id":3,"op":"list"}`,
		`{"id":4,"op":"rotate","ref":"arca://app/db","value":"n3w"}`,
		`{"id":5,"op":"check"}`,
		`{"id":6,"op":"manifest"}`,
		`{"id":7,"op":"rm","ref":"arca://app/db"}`,
		`{"id":8,"op":"get","ref":"arca://app/db"}`,
		`{"id":9,"op":"shutdown"}`,
	))
	checkReplies(t, tr, []want{ok("1"), ok("2"), ok("3"), ok("4"), ok("5"), ok("6"), ok("7"), {id: "8", code: "not_found", msg: "not found"}, ok("9")})
	if rs := tr.responses(t); len(rs) == 9 && !strings.Contains(string(rs[1].Result), `"value":"s3cret"`) {
		t.Errorf("get result %s does not hold the value put", rs[1].Result)
	}
}
