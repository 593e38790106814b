package trail

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arca-secrets/arca/audit"
)

// trailOf is n events as a writer of source writes them, as lines.
func trailOf(t testing.TB, source string, n int) []string {
	t.Helper()
	var buf bytes.Buffer
	clock := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	w := audit.NewWriter(&buf, source, func() time.Time { clock = clock.Add(time.Second); return clock })
	for i := range n {
		e := audit.Event{Event: "get", Op: "get", Outcome: audit.OK, Env: "prod", Ref: "app/db", Actor: "agent-1"}
		if i == 0 && source == audit.SourceServe {
			e = audit.Event{Event: "start", Message: "serving"}
		}
		if err := w.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	ls := strings.SplitAfter(buf.String(), "\n")
	return ls[:len(ls)-1] // the "" after the last newline
}

func join(ls []string) string {
	s := strings.Join(ls, "")
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s
}

// wantBreak fails unless verifying text breaks at line with a reason
// holding part.
func wantBreak(t *testing.T, name, text string, anchor *Anchor, line int, part string) {
	t.Helper()
	_, err := Verify(strings.NewReader(text), anchor)
	var b *Break
	if !errors.As(err, &b) || b.Line != line || !strings.Contains(b.Reason, part) {
		t.Errorf("%s: %v; want a break at line %d saying %q", name, err, line, part)
	}
}

func TestVerifyHolds(t *testing.T) {
	ls := trailOf(t, audit.SourceCLI, 10)
	res, err := Verify(strings.NewReader(join(ls)), nil)
	if err != nil || res.Lines != 10 || res.Streams != 1 || res.First != 1 || res.LastSeq != 10 || res.MidChain {
		t.Fatalf("%+v, %v", res, err)
	}
	if res.Last.Digest != audit.Link([]byte(strings.TrimSuffix(ls[9], "\n"))) {
		t.Fatal("the last anchor is not the last line's link")
	}
	if _, err := Verify(strings.NewReader(join(ls)), &res.Last); err != nil {
		t.Fatalf("with its own anchor: %v", err)
	}
	// A serve wire captured over two runs: two streams.
	wire := join(trailOf(t, audit.SourceServe, 5)) + join(trailOf(t, audit.SourceServe, 3))
	if res, err := Verify(strings.NewReader(wire), nil); err != nil || res.Streams != 2 || res.Lines != 8 || res.LastSeq != 3 {
		t.Fatalf("two serve runs: %+v, %v", res, err)
	}
	// The head cut off (a rotated file): it holds, said so.
	if res, err := Verify(strings.NewReader(join(ls[4:])), nil); err != nil || !res.MidChain || res.First != 5 {
		t.Fatalf("from seq 5: %+v, %v", res, err)
	}
	if res, err := Verify(strings.NewReader(""), nil); err != nil || res.Lines != 0 {
		t.Fatalf("empty: %+v, %v", res, err)
	}
}

// Every kind of tampering is found, at the line where it shows.
func TestVerifyFindsTampering(t *testing.T) {
	ls := trailOf(t, audit.SourceCLI, 8)
	edited := append([]string(nil), ls...)
	edited[3] = strings.Replace(edited[3], `"app/db"`, `"app/dc"`, 1)
	wantBreak(t, "edited", join(edited), nil, 5, "does not link to line 4")
	wantBreak(t, "deleted", join(append(append([]string(nil), ls[:3]...), ls[4:]...)), nil, 4, "does not link to line 3")
	inserted := append(append(append([]string(nil), ls[:3]...), ls[1]), ls[3:]...)
	wantBreak(t, "inserted", join(inserted), nil, 4, "does not link to line 3")
	reordered := append([]string(nil), ls...)
	reordered[2], reordered[3] = reordered[3], reordered[2]
	wantBreak(t, "reordered", join(reordered), nil, 3, "does not link to line 2")
	// An edit that also fixes the next line's link breaks the one after.
	// Rewriting every link from there on is what an anchor catches.
	full, _ := Verify(strings.NewReader(join(ls)), nil)
	wantBreak(t, "truncated, with an anchor", join(ls[:6]), &full.Last, 6, "the anchor's line 8 is not in the trail")
	rewritten := trailOf(t, audit.SourceCLI, 8) // the same events, other times: a whole new chain
	rewritten[7] = strings.Replace(rewritten[7], "agent-1", "agent-2", 1)
	wantBreak(t, "rewritten whole, with an anchor", join(fixLinks(rewritten)), &full.Last, 8, "does not match the anchor")
	wantBreak(t, "cut in the middle of the last line", join(ls[:4])+ls[4][:20], nil, 5, "ends in the middle of this line")
	wantBreak(t, "not an event", join(ls[:2])+"hello\n", nil, 3, "not an audit event")
	// A request id may hold the keys of an event: the line is still one.
	var wire bytes.Buffer
	w := audit.NewWriter(&wire, audit.SourceServe, nil)
	w.Write(audit.Event{Event: "start", Message: "m"})
	w.Write(audit.Event{Event: "get", Op: "get", Outcome: audit.OK, ID: []byte(`{"source":"x","v":1,"prev":"y"}`)})
	w.Write(audit.Event{Event: "stop", Message: "eof"})
	if res, err := Verify(bytes.NewReader(wire.Bytes()), nil); err != nil || res.Lines != 3 {
		t.Errorf("an id holding an event's keys: %+v, %v", res, err)
	}
	glued := append([]string(nil), ls[:4]...)
	glued[3] = strings.TrimSuffix(glued[3], "\n") + ls[3]
	wantBreak(t, "two events on one line", join(glued), nil, 4, "not an audit event")
	wantBreak(t, "a line past the bound", join(ls[:2])+strings.Repeat("x", audit.MaxLine+10)+"\n", nil, 3, "longer than")
	restart := append(append([]string(nil), ls[:4]...), trailOf(t, audit.SourceCLI, 2)...)
	wantBreak(t, "the chain restarted", join(restart), nil, 5, "the chain is cut here")
	wantBreak(t, "a seq skipped", join(fixLinks(skipSeq(ls, 5))), nil, 6, "seq 7 follows seq 5")
}

// Two processes that appended to one file without its lock (an old arca,
// a copy of the file written back) fork the chain: both link to the same
// line. The second one breaks it.
func TestVerifyFindsAFork(t *testing.T) {
	ls := trailOf(t, audit.SourceCLI, 4)
	other := strings.Replace(ls[3], "agent-1", "agent-9", 1) // seq 4 again, linked to line 3 too
	wantBreak(t, "forked", join(append(append([]string(nil), ls...), other)), nil, 5, "does not link to line 4")
}

func TestParseAnchor(t *testing.T) {
	link := strings.Repeat("ab", 32)
	if a, err := ParseAnchor("12:" + link); err != nil || a.Line != 12 || a.Digest != link || a.String() != "12:"+link {
		t.Fatalf("%+v, %v", a, err)
	}
	for _, bad := range []string{"", "12", "0:" + link, "x:" + link, "12:" + link[:60], "12:" + strings.ToUpper(link), "12:" + strings.Repeat("zz", 32)} {
		if _, err := ParseAnchor(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// skipSeq renumbers ls from line i (1-based) on, one higher.
func skipSeq(ls []string, i int) []string {
	out := append([]string(nil), ls...)
	for j := i; j < len(out); j++ {
		seq := audit.SeqOf([]byte(out[j]))
		out[j] = strings.Replace(out[j], `"seq":`+itoa(seq)+`,`, `"seq":`+itoa(seq+1)+`,`, 1)
	}
	return out
}

// fixLinks recomputes every link, as someone rewriting the file would.
func fixLinks(ls []string) []string {
	out := make([]string, len(ls))
	prev := ""
	for i, l := range ls {
		l = strings.TrimSuffix(l, "\n")
		if k := strings.Index(l, `,"prev":"`); k >= 0 {
			l = l[:k] + `}`
		}
		if prev != "" {
			l = strings.TrimSuffix(l, "}") + `,"prev":"` + audit.Link([]byte(prev)) + `"}`
		}
		out[i], prev = l+"\n", l
	}
	return out
}

func itoa(n uint64) string { return strings.TrimSpace(strings.Repeat(" ", 0) + uitoa(n)) }

func uitoa(n uint64) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// session is one serve process's wire: start, n-2 gets by actor, stop.
func session(t testing.TB, n int, actor string) string {
	t.Helper()
	var buf bytes.Buffer
	w := audit.NewWriter(&buf, audit.SourceServe, func() time.Time { return time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC) })
	for i := range n {
		e := audit.Event{Event: "get", Op: "get", Outcome: audit.OK, ID: []byte("1"), Env: "prod", Ref: "app/db", Actor: actor}
		switch i {
		case 0:
			e = audit.Event{Event: "start", Message: "serving"}
		case n - 1:
			e = audit.Event{Event: "stop", Message: "eof"}
		}
		if err := w.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	return buf.String()
}

// The anchor of a file of serve sessions commits to every line and to
// where each session starts: a whole session cut, added or moved before
// the anchored line fails it, sessions appended after it do not, and an
// earlier session that reaches the anchored line's seq is no match for it.
func TestVerifyAnchorsEverySession(t *testing.T) {
	a, b, c, d := session(t, 7, "agent:a"), session(t, 4, "agent:b"), session(t, 3, "agent:c"), session(t, 4, "agent:d")
	wire := a + b + c
	res, err := Verify(strings.NewReader(wire), nil)
	if err != nil || res.Lines != 14 || res.Streams != 3 || res.LastSeq != 3 || res.Last.Line != 14 {
		t.Fatalf("%+v, %v", res, err)
	}
	anchor := res.Last
	for name, text := range map[string]string{"untouched": wire, "a session appended": wire + d, "two appended": wire + d + a} {
		if _, err := Verify(strings.NewReader(text), &anchor); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Every line of the file is anchored: each line's anchor holds in
	// the file, and in the file grown.
	var lines []string
	for l := range strings.Lines(wire) {
		lines = append(lines, l)
		res, err := Verify(strings.NewReader(strings.Join(lines, "")), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Verify(strings.NewReader(wire+d), &res.Last); err != nil {
			t.Errorf("the anchor of line %d: %v", len(lines), err)
		}
	}
	for name, text := range map[string]string{
		"a session cut":                a + c,
		"a session replaced":           a + d + c,
		"a session moved":              b + a + c,
		"a session added before":       d + a + b + c,
		"a session added in between":   a + d + b + c,
		"the first session cut":        b + c,
		"sessions moved, same lengths": a + c + b,
	} {
		if _, err := Verify(strings.NewReader(text), nil); err != nil {
			t.Fatalf("%s: the chain alone does not hold: %v", name, err)
		}
		_, err := Verify(strings.NewReader(text), &anchor)
		var br *Break
		if !errors.As(err, &br) || !strings.Contains(br.Reason, "does not match the anchor") && !strings.Contains(br.Reason, "is not in the trail") {
			t.Errorf("%s: %v; want the anchor not to hold", name, err)
		}
	}
	wantBreak(t, "a session moved", b+a+c, &anchor, 14, "line 14 (seq 3 of serve process 3) does not match the anchor")
	wantBreak(t, "a session cut", a+c, &anchor, 10, "the anchor's line 14 is not in the trail, which ends at line 10")
	// An anchor as an older arca printed it, SEQ:LINK of the last event,
	// vouched for the last session alone: it is refused, and said so.
	last := strings.Split(strings.TrimSuffix(wire, "\n"), "\n")[13]
	old := Anchor{Line: 3, Digest: audit.Link([]byte(last))}
	wantBreak(t, "an older arca's anchor", wire, &old, 3, "line 3 (seq 3) does not match the anchor")
	wantBreak(t, "an older arca's anchor", wire, &old, 3, "the anchor is the link of line 14 (seq 3 of serve process 3): an anchor as an older arca printed it, SEQ:LINK")
	// In a trail of one stream from seq 1 the two are one.
	if res, err := Verify(strings.NewReader(c), nil); err != nil || res.Last != (Anchor{Line: 3, Digest: audit.Link([]byte(strings.Split(c, "\n")[2]))}) {
		t.Errorf("one session: %+v, %v; want its last seq and link", res, err)
	}
}

// The page's own reads (source ui) continue the CLI's audit file and its
// chain: a trail of cli events then ui events, one writer after the
// other on the same audit file, as arca ui appends to it, holds.
func TestVerifyHoldsThePagesEvents(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	f, err := audit.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	clock := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { clock = clock.Add(time.Second); return clock }
	if err := audit.NewWriter(f, audit.SourceCLI, now).Write(audit.Event{Event: "put", Op: "put", Outcome: audit.OK, Env: "default", Ref: "app/db", Version: 1}); err != nil {
		t.Fatal(err)
	}
	if err := audit.NewWriter(f, audit.SourceUI, now).Write(audit.Event{Event: "list", Op: "list", Outcome: audit.OK, Env: "default"}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Verify(bytes.NewReader(b), nil)
	if err != nil || res.Lines != 2 || res.LastSeq != 2 || !strings.Contains(string(b), `"source":"ui","prev":"`) {
		t.Fatalf("a trail with the page's events: %+v, %v\n%s", res, err, b)
	}
}
