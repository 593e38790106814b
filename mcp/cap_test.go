package mcp

// The output cap: whatever a use answers or a list holds, the whole
// tools/call response line is at most MaxOutput bytes, and the result
// says what it left out.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/opstest"
)

// bulky is n bytes of text full of what JSON escapes (quotes, <, >, &,
// backslashes): each byte may take up to six on the wire.
func bulky(n int) []byte {
	const unit = `{"k":"<v>&\\"}` + "\n"
	return []byte(strings.Repeat(unit, n/len(unit)+1)[:n])
}

// callLines are the lines of the transcript that answer a tools/call:
// every response line whose result holds content.
func callLines(t *testing.T, transcript []byte) [][]byte {
	t.Helper()
	var out [][]byte
	for line := range bytes.SplitSeq(transcript, []byte("\n")) {
		var m struct {
			Result *struct {
				Content json.RawMessage `json:"content"`
			} `json:"result"`
		}
		if json.Unmarshal(line, &m) == nil && m.Result != nil && m.Result.Content != nil {
			out = append(out, line)
		}
	}
	return out
}

// withinCap holds the last tools/call answer of h's transcript to
// MaxOutput bytes, newline aside.
func withinCap(t *testing.T, h *harness) {
	t.Helper()
	lines := callLines(t, h.transcript.Bytes())
	if len(lines) == 0 {
		t.Fatal("no tools/call answer in the transcript")
	}
	if n := len(lines[len(lines)-1]); n > MaxOutput {
		t.Errorf("the tools/call answer is %d bytes, over %d", n, MaxOutput)
	}
}

// TestOutputCapHTTP: a 1 MiB body, the service allowing it, is answered
// cut and truncated, the line within the cap; what is kept is the
// body's start.
func TestOutputCapHTTP(t *testing.T) {
	body := bulky(1 << 20)
	u := newEchoUpstream(t, func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(body) })
	h := newHarness(t, harnessOptions{config: u.service("big", "arca://svc/token", "max_response_bytes = 2097152")})
	h.put("arca://svc/token", "cap-canary-token")
	var out httpOut
	sum := success(t, h.call("arca_http", map[string]any{"service": "big", "method": "GET", "path": "/"}), &out)
	if !out.Truncated || len(out.Body) == 0 || len(out.Body) >= len(body) || !bytes.HasPrefix(body, []byte(out.Body)) {
		t.Fatalf("http: truncated %v, %d bytes kept: want the body's start, truncated", out.Truncated, len(out.Body))
	}
	wantSummary(t, sum, fmt.Sprintf("big answered 200 (%d bytes), truncated", len(out.Body)))
	withinCap(t, h)
}

// TestOutputCapBinary: a 1 MiB body that is not UTF-8 is answered as
// body_b64, cut, truncated, within the cap: what is kept is the body's
// start, however its bytes look (all of them UTF-8 continuation bytes
// included).
func TestOutputCapBinary(t *testing.T) {
	random := make([]byte, 1<<20)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	bodies := map[string][]byte{"/random": random, "/continuation": bytes.Repeat([]byte{0x80}, 1<<20)}
	u := newEchoUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(bodies[r.URL.Path])
	})
	h := newHarness(t, harnessOptions{config: u.service("bin", "arca://svc/token", "max_response_bytes = 2097152")})
	h.put("arca://svc/token", "cap-canary-token")
	for path, body := range bodies {
		var out struct {
			BodyB64   string `json:"body_b64"`
			Truncated bool   `json:"truncated"`
		}
		success(t, h.call("arca_http", map[string]any{"service": "bin", "method": "GET", "path": path}), &out)
		kept, err := base64.StdEncoding.DecodeString(out.BodyB64)
		if err != nil || !out.Truncated || len(kept) < 1<<10 || len(kept) >= len(body) || !bytes.HasPrefix(body, kept) {
			t.Errorf("%s: truncated %v, %d bytes kept (%v): want the body's start, truncated", path, out.Truncated, len(kept), err)
		}
		withinCap(t, h)
	}
}

// TestOutputCapAction: an action printing 1 MiB on stdout, the action
// allowing it, is answered with stdout cut and truncated.stdout, stderr
// whole, the line within the cap.
func TestOutputCapAction(t *testing.T) {
	cfg := "[actions.loud]\nargv = [\"sh\", \"-c\", 'yes \"<a\\\\\\\"b&>\" | head -c 1048576; printf done >&2']\nmax_output_bytes = 2097152\n"
	h := newHarness(t, harnessOptions{config: cfg, environ: pathEnv()})
	var out execOut
	success(t, h.call("arca_action", map[string]any{"action": "loud"}), &out)
	if !out.Truncated.Stdout || out.Truncated.Stderr || out.Stderr != "done" || len(out.Stdout) == 0 || len(out.Stdout) >= 1<<20 {
		t.Fatalf("exec: stdout %d bytes (truncated %v), stderr %q (truncated %v)", len(out.Stdout), out.Truncated.Stdout, out.Stderr, out.Truncated.Stderr)
	}
	if !strings.HasPrefix(out.Stdout, `<a\"b&>`+"\n") {
		t.Errorf("stdout starts %q, want the action's first line", out.Stdout[:min(len(out.Stdout), 20)])
	}
	withinCap(t, h)
}

// TestOutputCapList: a list of 3000 records with long refs is cut within
// the cap, truncated, omitted counting the records left out; changes
// over them is cut and answers reset.
func TestOutputCapList(t *testing.T) {
	h := newHarness(t, harnessOptions{backends: &opstest.MemBackends{}})
	var start ops.ChangesResult
	success(t, h.call("arca_changes", map[string]any{}), &start)
	const n = 3000
	ns, name := strings.Repeat("n", 120), strings.Repeat("x", 110)
	for i := range n {
		h.put(fmt.Sprintf("arca://%s/%s-%04d", ns, name, i), "v")
	}
	var out ops.ListResult
	sum := success(t, h.call("arca_list", map[string]any{}), &out)
	if !out.Truncated || len(out.Records) == 0 || out.Omitted != n-len(out.Records) {
		t.Fatalf("list: %d records, truncated %v, omitted %d: want %d in all", len(out.Records), out.Truncated, out.Omitted, n)
	}
	wantSummary(t, sum, fmt.Sprintf("%d records in env default (%d more left out)", len(out.Records), out.Omitted))
	withinCap(t, h)

	var ch ops.ChangesResult
	success(t, h.call("arca_changes", map[string]any{"since": start.Cursor}), &ch)
	if !ch.Truncated || !ch.Reset || len(ch.Changes) == 0 || len(ch.Changes) >= n {
		t.Fatalf("changes: %d rows, truncated %v, reset %v", len(ch.Changes), ch.Truncated, ch.Reset)
	}
	withinCap(t, h)
}

// TestOutputCapLineEdge: a body just small enough that the result alone
// fits in MaxOutput is still cut when the JSON-RPC response around it
// would take the line past the cap.
func TestOutputCapLineEdge(t *testing.T) {
	size := make(chan int, 1)
	u := newEchoUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write(bytes.Repeat([]byte("a"), <-size))
	})
	h := newHarness(t, harnessOptions{config: u.service("api", "arca://svc/token", "")})
	h.put("arca://svc/token", "edge-canary-token")
	args := map[string]any{"service": "api", "method": "GET", "path": "/"}
	const probe = 100000 // the body's length shows in the summary: as many digits as the edge's
	size <- probe
	var out httpOut
	success(t, h.call("arca_http", args), &out)
	lines := callLines(t, h.transcript.Bytes())
	// The body is in the line twice (structured and as text), each byte
	// of it one byte: the line grows by two a byte. The edge takes it 8
	// bytes past the cap (elapsed_ms may take a digit or two more or
	// less).
	edge := probe + (MaxOutput-len(lines[len(lines)-1]))/2 + 4
	size <- edge
	success(t, h.call("arca_http", args), &out)
	if out.Truncated == (len(out.Body) == edge) {
		t.Fatalf("a body of %d bytes answered %d bytes, truncated %v", edge, len(out.Body), out.Truncated)
	}
	withinCap(t, h)
}

// TestCutTextOnRune: a cut of UTF-8 text keeps it UTF-8, as long as it
// can, giving back at most the rune the cut falls in; bytes that are not
// UTF-8 are cut where the cut falls.
func TestCutTextOnRune(t *testing.T) {
	text := []byte("aé€😀b")
	for n := range len(text) + 2 {
		got := cutText(text, n)
		if !utf8.Valid(got) || len(got) > n || len(got) < n-(utf8.UTFMax-1) || !bytes.HasPrefix(text, got) {
			t.Errorf("cutText(%q, %d) = %q", text, n, got)
		}
	}
	cont := bytes.Repeat([]byte{0x80}, 100)
	if got := cutText(cont, 50); len(got) < 50-(utf8.UTFMax-1) {
		t.Errorf("continuation bytes cut at 50 keep %d", len(got))
	}
}
