package serve

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// scrubbed is a scrub result as the wire carries it.
type scrubbed struct {
	Text       string `json:"text"`
	Redactions []struct {
		Ref   string `json:"ref"`
		Count int    `json:"count"`
	} `json:"redactions"`
	Unscrubbable []string `json:"unscrubbable"`
}

func scrubResults(t *testing.T, tr transcript) map[string]scrubbed {
	t.Helper()
	out := map[string]scrubbed{}
	for _, r := range tr.responses(t) {
		if !r.OK {
			continue
		}
		var s scrubbed
		if json.Unmarshal(r.Result, &s) == nil && strings.Contains(string(r.Result), `"unscrubbable"`) {
			out[string(r.ID)] = s
		}
	}
	return out
}

// scrubLine is a scrub request line for text, with more fields (a JSON
// fragment, "" for none).
func scrubLine(id, text, more string) string {
	b, _ := json.Marshal(text)
	if more != "" {
		more = "," + more
	}
	return fmt.Sprintf(`{"id":%s,"op":"scrub","text":%s%s}`, id, b, more)
}

// scrubValue holds a quote and a slash, so its JSON form differs from its
// bytes.
const scrubValue = `pa"ss/w0rd-horse-42`

// TestScrubRedactsReleasedValues: a value is redacted once the session has
// released it (not before), in its raw, JSON and base64 forms, each counted
// under its ref; the placeholder names the bare ns/name.
func TestScrubRedactsReleasedValues(t *testing.T) {
	f := newFixture(t)
	val, _ := json.Marshal(scrubValue)
	jsonForm := string(val[1 : len(val)-1])
	b64 := base64.StdEncoding.EncodeToString([]byte("Authorization: " + scrubValue + " end"))
	text := "raw " + scrubValue + " json {\"p\":\"" + jsonForm + "\"} b64 " + b64 + " done"
	tr := f.serve(t, lines(
		`{"id":1,"op":"put","ref":"arca://app/db","value":`+string(val)+`}`,
		scrubLine("2", text, ""),
		`{"id":3,"op":"get","ref":"arca://app/db"}`,
		scrubLine("4", text, ""),
	))
	checkReplies(t, tr, []want{ok("1"), ok("2"), ok("3"), ok("4")})
	res := scrubResults(t, tr)
	if before := res["2"]; before.Text != text || len(before.Redactions) != 0 {
		t.Errorf("scrub before the get: %+v, want the text unchanged", before)
	}
	after := res["4"]
	if strings.Contains(after.Text, "w0rd-horse") || strings.Contains(after.Text, jsonForm) {
		t.Errorf("scrubbed text still holds the value: %q", after.Text)
	}
	if n := strings.Count(after.Text, "<redacted:app/db>"); n != 3 {
		t.Errorf("scrubbed text %q has %d placeholders, want 3", after.Text, n)
	}
	if len(after.Redactions) != 1 || after.Redactions[0].Ref != "arca://app/db" || after.Redactions[0].Count != 3 {
		t.Errorf("redactions %+v, want arca://app/db 3", after.Redactions)
	}
	if !strings.HasPrefix(after.Text, "raw <redacted:app/db> json ") || !strings.HasSuffix(after.Text, " done") {
		t.Errorf("scrubbed text %q lost what was around the value", after.Text)
	}
}

// TestScrubStreamChunksMatchWhole: a text sent as three chunks of a stream
// (cut inside the value and inside a multi-byte character) gives the text
// and counts the whole text gives in one request.
func TestScrubStreamChunksMatchWhole(t *testing.T) {
	f := newFixture(t)
	text := "héllo " + scrubValue + " → wörld " + scrubValue + " ✓"
	cuts := []int{strings.Index(text, "w0rd") + 1, strings.Index(text, "→") + 1}
	chunks := []string{text[:cuts[0]], text[cuts[0]:cuts[1]], text[cuts[1]:]}
	// Chunks cut inside a character are not strings: send them whole
	// characters, as a client must, by moving the cut.
	for i := range chunks[:2] {
		for !utf8.ValidString(chunks[i]) {
			chunks[i], chunks[i+1] = chunks[i][:len(chunks[i])-1], chunks[i][len(chunks[i])-1:]+chunks[i+1]
		}
	}
	val, _ := json.Marshal(scrubValue)
	tr := f.serve(t, lines(
		`{"id":1,"op":"put","ref":"arca://app/db","value":`+string(val)+`}`,
		`{"id":2,"op":"get","ref":"arca://app/db"}`,
		scrubLine("3", text, ""),
		scrubLine("4", chunks[0], `"stream":"s1","final":false`),
		scrubLine("5", chunks[1], `"stream":"s1","final":false`),
		scrubLine("6", chunks[2], `"stream":"s1","final":true`),
		scrubLine("7", text, `"stream":"s2"`),
	))
	checkReplies(t, tr, []want{ok("1"), ok("2"), ok("3"), ok("4"), ok("5"), ok("6"), ok("7")})
	res := scrubResults(t, tr)
	whole := res["3"]
	var got string
	count := 0
	for _, id := range []string{"4", "5", "6"} {
		got += res[id].Text
		for _, r := range res[id].Redactions {
			count += r.Count
		}
	}
	if got != whole.Text || count != 2 || whole.Redactions[0].Count != 2 {
		t.Errorf("chunks gave %q (%d redactions), the whole text %q (%+v)", got, count, whole.Text, whole.Redactions)
	}
	if res["7"].Text != whole.Text {
		t.Errorf("a one-chunk stream gave %q, want %q", res["7"].Text, whole.Text)
	}
}

// TestScrubStreamBound: 64 streams open at once; a 65th is bad_request
// naming the bound, until one has been idle 60 s, when it is dropped and
// the new one opens. The clock moves by request, never by sleeping.
func TestScrubStreamBound(t *testing.T) {
	f := newFixture(t)
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	calls := 0
	clock := func() time.Time {
		calls++
		if calls > 65 { // after the refused 65th stream
			return t0.Add(60 * time.Second)
		}
		return t0
	}
	var ls []string
	var ws []want
	for i := range 64 {
		ls = append(ls, scrubLine(fmt.Sprint(i+1), "x", fmt.Sprintf(`"stream":"s%d","final":false`, i)))
		ws = append(ws, ok(fmt.Sprint(i+1)))
	}
	ls = append(ls, scrubLine("65", "x", `"stream":"late","final":false`))
	ws = append(ws, bad("65", "64 scrub streams are open"))
	ls = append(ls, scrubLine("66", "x", `"stream":"late","final":false`))
	ws = append(ws, ok("66"))
	tr := f.session(t, sessionOpts{stdin: strings.NewReader(lines(ls...)), sent: []byte(lines(ls...)), scrubClock: clock})
	checkReplies(t, tr, ws)
}

// TestScrubBadRequests: what is wrong with a scrub request is named.
func TestScrubBadRequests(t *testing.T) {
	f := newFixture(t)
	long := strings.Repeat("s", 129)
	tr := f.serve(t, lines(
		`{"id":1,"op":"scrub","text":42}`,
		`{"id":2,"op":"scrub","text":"x","stream":"`+long+`"}`,
		`{"id":3,"op":"scrub","text":"x","extra":1}`,
		`{"id":4,"op":"scrub","text":"x","final":"yes"}`,
		`{"id":5,"op":"scrub"}`,
		`{"id":6,"op":"scrub","text":"x","ref":"arca://app/db"}`,
		`{"id":7,"op":"scrub","text":"x","stream":""}`,
		`{"id":8,"op":"get","ref":"arca://app/db","final":true}`,
		`{"id":9,"op":"scrub","text":""}`,
	))
	checkReplies(t, tr, []want{
		bad("1", `field "text" must be a string`),
		bad("2", `field "stream" is larger than 128 bytes`),
		bad("3", `unknown field "extra"`),
		bad("4", `field "final" must be true or false`),
		bad("5", `scrub needs field "text"`),
		bad("6", `scrub takes no field "ref"`),
		bad("7", "stream is empty"),
		bad("8", `get takes no field "final"`),
		ok("9"),
	})
}

// TestScrubShortValue: a released value under 4 bytes is not registered
// and every scrub reports its ref as unscrubbable; the text is left as it
// is.
func TestScrubShortValue(t *testing.T) {
	f := newFixture(t)
	tr := f.serve(t, lines(
		`{"id":1,"op":"put","ref":"arca://app/pin","value":"abc"}`,
		`{"id":2,"op":"get","ref":"arca://app/pin"}`,
		scrubLine("3", "pin abc here", ""),
	))
	checkReplies(t, tr, []want{ok("1"), ok("2"), ok("3")})
	res := scrubResults(t, tr)["3"]
	if res.Text != "pin abc here" || len(res.Unscrubbable) != 1 || res.Unscrubbable[0] != "arca://app/pin" {
		t.Errorf("scrub after a 3-byte value: %+v, want the text unchanged and arca://app/pin unscrubbable", res)
	}
}

// TestScrubCanary: the value reaches stdout in the get's answer (the
// positive control) and nowhere else: not in a scrub's answer, not in an
// error message, not on the audit wire, whichever path a scrub takes.
func TestScrubCanary(t *testing.T) {
	f := newFixture(t)
	const canary = "canary-7f3a9c-value"
	b64 := base64.RawURLEncoding.EncodeToString([]byte(canary))
	tr := f.serve(t, lines(
		`{"id":1,"op":"put","ref":"arca://app/canary","value":"`+canary+`"}`,
		`{"id":2,"op":"get","ref":"arca://app/canary"}`,
		scrubLine("3", "a "+canary+" b "+b64, ""),
		scrubLine("4", "a "+canary[:5], `"stream":"c","final":false`),
		scrubLine("5", canary[5:]+" b", `"stream":"c"`),
		scrubLine("6", canary, `"stream":"`+canary+strings.Repeat("x", 128)+`"`),
		scrubLine("7", canary, `"extra":"`+canary+`"`),
		scrubLine("8", canary, `"final":"`+canary+`"`),
		scrubLine("9", canary, `"ref":"arca://app/`+canary+`"`),
		scrubLine("10", canary, `"stream":"c2","final":false`),
	))
	rs := tr.responses(t)
	if len(rs) != 10 {
		t.Fatalf("%d replies, want 10", len(rs))
	}
	if !strings.Contains(tr.stdout[1], canary) {
		t.Fatalf("the get's answer does not hold the value: the canary proves nothing")
	}
	for i, l := range tr.stdout {
		if i != 1 && (strings.Contains(l, canary) || strings.Contains(l, b64)) {
			t.Errorf("stdout line %d holds the value: %s", i+1, short(l))
		}
	}
	if strings.Contains(string(tr.rawErr), canary) || strings.Contains(string(tr.rawErr), b64) {
		t.Errorf("the audit wire holds the value")
	}
	for _, e := range tr.events(t) {
		if e.Op == "scrub" && e.Outcome == "ok" && !strings.Contains(e.Message, "bytes in") {
			t.Errorf("scrub event message %q does not count bytes", e.Message)
		}
	}
}
