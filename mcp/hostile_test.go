package mcp

// arca mcp driven as a hostile client would: the built binary, raw
// JSON-RPC lines on its stdin, signals.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// humanPDP is an exec PDP that sends every request to a human unless it
// carries an approved approval.
const humanPDP = `[serve.pdp]
exec = '''if grep -q '"state":"approved"'; then echo '{"allow":true}'; else echo '{"allow":false,"reason":"a human must look","obligations":["arca:approval"]}'; fi'''
timeout_ms = 10000
`

// rawSession is `arca mcp` with its stdin and stdout as raw lines.
type rawSession struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan []byte
}

// startRaw starts `arca mcp args...` in h with the approver's token in
// its environment.
func (h arcaHome) startRaw(t *testing.T, args ...string) *rawSession {
	t.Helper()
	cmd := h.command(append([]string{"mcp"}, args...)...)
	cmd.Env = append(cmd.Env, "ARCA_APPROVER_TOKEN="+approverToken)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &rawSession{cmd: cmd, stdin: stdin, lines: make(chan []byte)}
	go func() {
		defer close(s.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			s.lines <- bytes.Clone(sc.Bytes())
		}
	}()
	t.Cleanup(func() { _ = stdin.Close(); _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return s
}

// write writes lines, each a message.
func (s *rawSession) write(t *testing.T, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(s.stdin, l+"\n"); err != nil {
			t.Fatal(err)
		}
	}
}

// next is the next line arca writes, decoded.
func (s *rawSession) next(t *testing.T, what string) map[string]any {
	t.Helper()
	var l []byte
	select {
	case line, ok := <-s.lines:
		if !ok {
			t.Fatalf("arca mcp ended before %s", what)
		}
		l = line
	case <-time.After(30 * time.Second):
		t.Fatalf("no %s in 30s", what)
	}
	var m map[string]any
	if err := json.Unmarshal(l, &m); err != nil {
		t.Fatalf("%s: %q: %v", what, l, err)
	}
	return m
}

// ends waits for the process to end, within a bound that only a hang
// reaches, and returns its exit code.
func (s *rawSession) ends(t *testing.T, what string) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case <-done:
		for range s.lines { // what it wrote last
		}
		return s.cmd.ProcessState.ExitCode()
	case <-time.After(30 * time.Second):
		t.Fatalf("arca mcp still runs 30s after %s", what)
		return -1
	}
}

// initURL is the initialize of a 2025-11-25 client that can send its
// user to a URL.
const initURL = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{"url":{}}},"clientInfo":{"name":"hostile","version":"1"}}}`

// TestHostile drives the built arca mcp with raw lines.
func TestHostile(t *testing.T) {
	bin := buildArca(t)
	t.Run("stop-signal-while-waiting", func(t *testing.T) { hostileStopWhileWaiting(t, bin) })
	t.Run("input-ends-while-waiting", func(t *testing.T) { hostileEOFWhileWaiting(t, bin) })
}

// hostileStopWhileWaiting: a stop signal ends a session whose call waits
// on a human, at once, with status 1: while arca's question to the
// client is unanswered, while the call waits for the approval's
// decision, and while arca_request_secret waits for the value.
func hostileStopWhileWaiting(t *testing.T, bin string) {
	h := newHome(t, bin, humanPDP+pageConfig)
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"arca_list","arguments":{}}}`
	ask := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"arca_request_secret","arguments":{"ref":"arca://app/new","description":"the new key"}}}`
	for _, c := range []struct {
		name, call string
		accept     bool
	}{
		{"question-unanswered", list, false},
		{"approval-pending", list, true},
		{"request-pending", ask, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := h.startRaw(t, "--audit-stderr")
			s.write(t, initURL)
			s.next(t, "the initialize answer")
			s.write(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, c.call)
			q := s.next(t, "arca's question")
			if q["method"] != "elicitation/create" {
				t.Fatalf("the call was answered %v, want a question to the client", q)
			}
			if c.accept {
				b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": q["id"], "result": map[string]any{"action": "accept"}})
				s.write(t, string(b), `{"jsonrpc":"2.0","id":9,"method":"ping"}`)
				if p := s.next(t, "the ping"); p["id"] != 9.0 {
					t.Fatalf("the ping was answered %v", p)
				}
			}
			if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			if code := s.ends(t, "SIGTERM"); code != 1 {
				t.Errorf("arca mcp exited %d after SIGTERM, want 1", code)
			}
		})
	}
}

// hostileEOFWhileWaiting: a client that closes its input while its
// arca_request_secret call waits for the human's value gets that call
// answered (a tool error), and the session ends, status 0, as a call
// waiting for an approval does.
func hostileEOFWhileWaiting(t *testing.T, bin string) {
	h := newHome(t, bin, pageConfig)
	s := h.startRaw(t, "--audit-stderr")
	s.write(t, initURL)
	s.next(t, "the initialize answer")
	s.write(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"arca_request_secret","arguments":{"ref":"arca://app/new","description":"the new key"}}}`)
	q := s.next(t, "arca's question")
	if q["method"] != "elicitation/create" {
		t.Fatalf("the call was answered %v, want a question to the client", q)
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": q["id"], "result": map[string]any{"action": "accept"}})
	s.write(t, string(b), `{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	if p := s.next(t, "the ping"); p["id"] != 9.0 {
		t.Fatalf("the ping was answered %v", p)
	}
	_ = s.stdin.Close()
	ans := s.next(t, "the waiting call's answer")
	if res, _ := ans["result"].(map[string]any); ans["id"] != 1.0 || res["isError"] != true {
		t.Errorf("the waiting call was answered %v, want a tool error", ans)
	}
	if code := s.ends(t, "the end of input"); code != 0 {
		t.Errorf("arca mcp exited %d at the end of input, want 0", code)
	}
}
