package client

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/arca-secrets/arca/audit"
)

// scriptedServe is a stand-in for serve that writes crafted stderr: the
// lines of start.err at once, those of N.err when request N comes (before
// its response), and answers the manifest with manifest.json, any other
// request with an empty result.
const scriptedServe = `cat start.err >&2
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed 's/^{"id":\([0-9]*\),.*/\1/')
  if [ -f "$id.err" ]; then cat "$id.err" >&2; fi
  case "$line" in
  *'"op":"manifest"'*) printf '{"id":%s,"ok":true,"result":%s}\n' "$id" "$(cat manifest.json)" ;;
  *) printf '{"id":%s,"ok":true,"result":{}}\n' "$id" ;;
  esac
done
`

// link puts in each line's PREV the link of the line before it, in BAD a
// link to another line.
func link(templates ...string) []string {
	lines := make([]string, len(templates))
	for i, t := range templates {
		if i > 0 {
			t = strings.ReplaceAll(t, "PREV", audit.Link([]byte(lines[i-1])))
		}
		lines[i] = strings.ReplaceAll(t, "BAD", audit.Link([]byte("another line")))
	}
	return lines
}

// ev is an event line as serve writes it, with extra fields before the
// closing brace.
func ev(seq int, extra string) string {
	return fmt.Sprintf(`{"v":1,"ts":"2026-11-30T08:14:14.381353202Z","seq":%d,"event":"get","outcome":"ok","source":"serve"%s}`, seq, extra)
}

// streamErrors runs the scripted serve with its first `atStart` lines
// written at start and the rest when the second request comes, after Start
// read the manifest; it returns what OnEvent was told of each line, in
// order ("" for a line that holds).
func streamErrors(t *testing.T, manifest string, lines []string, atStart int) []string {
	t.Helper()
	o := script(t, scriptedServe)
	files := map[string]string{
		"start.err":     strings.Join(lines[:atStart], "\n") + "\n",
		"2.err":         strings.Join(lines[atStart:], "\n") + "\n",
		"manifest.json": manifest,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(o.Dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var got []string
	o.OnEvent = func(_ audit.Event, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			got = append(got, err.Error())
		} else {
			got = append(got, "")
		}
	}
	c := start(t, o)
	if err := c.Shutdown(context.Background()); err != nil { // request 2
		t.Fatal(err)
	}
	waitFor(t, "the events", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) == len(lines)
	})
	mu.Lock()
	defer mu.Unlock()
	return append([]string(nil), got...)
}

const (
	oldManifest     = `{"protocol":"arca-serve/1"}`
	chainedManifest = `{"protocol":"arca-serve/1","capabilities":{"audit_chain":{"field":"prev","hash":"sha256"}}}`
)

// wantErrors holds the errors of a stream to one for each line named in
// want (by index, with a part of its message), and none for the others.
func wantErrors(t *testing.T, what string, got []string, want map[int]string) {
	t.Helper()
	for i, msg := range got {
		w, bad := want[i]
		switch {
		case bad && (msg == "" || !strings.Contains(msg, w)):
			t.Errorf("%s: line %d: %q, want an error with %q", what, i, msg, w)
		case !bad && msg != "":
			t.Errorf("%s: line %d: %s", what, i, msg)
		}
	}
}

// (a) A server from before the chain writes no prev: its stream holds. A
// prev is required once one was seen, or once the manifest lists
// audit_chain.
func TestChainRequiredOnlyOnceKnown(t *testing.T) {
	old := link(startEvent, ev(2, ""), ev(3, ""), ev(4, ""))
	wantErrors(t, "a server before the chain", streamErrors(t, oldManifest, old, 2), nil)

	seen := link(startEvent, ev(2, `,"prev":"PREV"`), ev(3, ""), ev(4, `,"prev":"PREV"`))
	wantErrors(t, "a prev once seen", streamErrors(t, oldManifest, seen, 2), map[int]string{2: "seq 3 carries no prev"})

	promised := link(startEvent, ev(2, ""), ev(3, `,"prev":"PREV"`))
	wantErrors(t, "the manifest's audit_chain", streamErrors(t, chainedManifest, promised, 1), map[int]string{1: "seq 2 carries no prev"})
}

// (b) After a break, each event is checked against the line before it:
// one bad line is one error, whether its link or its seq is wrong.
func TestChainBreakIsOneError(t *testing.T) {
	lines := link(startEvent, ev(2, `,"prev":"PREV"`), ev(3, `,"prev":"BAD"`), ev(4, `,"prev":"PREV"`), ev(5, `,"prev":"PREV"`),
		ev(7, `,"prev":"PREV"`), ev(8, `,"prev":"PREV"`), `not an event`, ev(9, `,"prev":"PREV"`), ev(10, `,"prev":"PREV"`))
	wantErrors(t, "a stream with a broken link, a seq gap and a line not an event", streamErrors(t, chainedManifest, lines, 1), map[int]string{
		2: "seq 3 does not link to the event before it",
		5: "seq 7 follows seq 5",
		7: "not an audit event",
	})
}

// (c) prev is the field, wherever it stands in the line: the link of the
// exact bytes of the line before, whatever their order.
func TestChainIgnoresFieldOrder(t *testing.T) {
	lines := link(
		`{"source":"serve","event":"start","seq":1,"v":1,"ts":"2026-11-30T08:14:14.381353202Z"}`,
		`{"prev":"PREV","v":1,"ts":"2026-11-30T08:14:14.381353202Z","seq":2,"event":"get","source":"serve"}`,
		`{"v":1,"seq":3,"prev":"PREV","event":"get","added":{"x":[1,"y"]},"source":"serve","ts":"2026-11-30T08:14:14.381353202Z"}`,
		`{"v":1,"seq":4,"prev":"BAD","event":"get","source":"serve","ts":"2026-11-30T08:14:14.381353202Z"}`,
		`{"seq":5,"v":1,"event":"get","source":"serve","prev":"PREV","ts":"2026-11-30T08:14:14.381353202Z","later":true}`,
	)
	wantErrors(t, "events in another field order", streamErrors(t, chainedManifest, lines, 2), map[int]string{3: "seq 4 does not link"})
}
