package mcp

// arca mcp as an agent host runs it: the built binary, its own process,
// real pipes, with the Go SDK's own client on the other end over its
// CommandTransport.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/audit"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// arcaHome is the built arca and a HOME where `arca init` ran, with the
// config every run of it is given.
type arcaHome struct {
	bin, home, config string
}

// buildArca builds cmd/arca into a temp dir.
func buildArca(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "arca")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/arca").CombinedOutput(); err != nil {
		t.Fatalf("go build ../cmd/arca: %v\n%s", err, out)
	}
	return bin
}

// newHome makes a fresh HOME, runs `arca init` in it and writes config as
// the config every command is pinned to.
func newHome(t *testing.T, bin, config string) arcaHome {
	t.Helper()
	h := arcaHome{bin: bin, home: t.TempDir()}
	h.config = filepath.Join(h.home, "agent.toml")
	if err := os.WriteFile(h.config, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := h.command("init").CombinedOutput(); err != nil {
		t.Fatalf("arca init: %v\n%s", err, out)
	}
	return h
}

// command is arca with args and the config pinned, its environment only
// HOME, PATH and LANG.
func (h arcaHome) command(args ...string) *exec.Cmd {
	cmd := exec.Command(h.bin, append([]string{"--config", h.config}, args...)...)
	cmd.Env = []string{"HOME=" + h.home, "PATH=" + os.Getenv("PATH"), "LANG=C"}
	cmd.Dir = h.home
	return cmd
}

// put stores value at ref, as a human would before the session.
func (h arcaHome) put(t *testing.T, ref, value string) {
	t.Helper()
	cmd := h.command("put", ref)
	cmd.Stdin = strings.NewReader(value)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("arca put %s: %v\n%s", ref, err, out)
	}
}

// mcpSession is `arca mcp` run with args, the SDK's client connected to
// it; stderr is what the process wrote there, whole once close returned.
type mcpSession struct {
	cs     *sdk.ClientSession
	cmd    *exec.Cmd
	stderr *syncBuffer
}

// connect starts `arca mcp args...` through the SDK's CommandTransport,
// its client named client.
func (h arcaHome) connect(t *testing.T, client string, args ...string) *mcpSession {
	t.Helper()
	s := &mcpSession{cmd: h.command(append([]string{"mcp"}, args...)...), stderr: &syncBuffer{}}
	s.cmd.Stderr = s.stderr
	c := sdk.NewClient(&sdk.Implementation{Name: client, Version: "1.0"}, nil)
	cs, err := c.Connect(context.Background(), &sdk.CommandTransport{Command: s.cmd}, nil)
	if err != nil {
		t.Fatalf("connect to arca mcp: %v\n%s", err, s.stderr.Bytes())
	}
	s.cs = cs
	t.Cleanup(func() { _ = cs.Close() })
	return s
}

// call calls a tool; a protocol error fails the test.
func (s *mcpSession) call(t *testing.T, name string, args any) *sdk.CallToolResult {
	t.Helper()
	res, err := s.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

// close closes the session's input and waits for the process to end; it
// must end well.
func (s *mcpSession) close(t *testing.T) {
	t.Helper()
	if err := s.cs.Close(); err != nil {
		t.Fatalf("arca mcp ended: %v\n%s", err, s.stderr.Bytes())
	}
	if code := s.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("arca mcp exited %d", code)
	}
}

// processPDP is an exec PDP that denies a request about app/denied, with
// a reason, and allows every other.
const processPDP = `[serve.pdp]
exec = '''if grep -q '"ref":"app/denied"'; then echo '{"allow":false,"reason":"not app/denied"}'; else echo '{"allow":true}'; fi'''
timeout_ms = 10000
`

// TestProcess runs the built arca mcp: every tool answers a success and
// an error through the real process; the audit wire on stderr holds
// start, an event per call naming the client and the actor, and stop;
// without --audit-stderr the events land in the audit file, whose chain
// verifies; a 100 MiB line is answered with a parse error in bounded
// memory and the session goes on.
func TestProcess(t *testing.T) {
	bin := buildArca(t)
	t.Run("tools", func(t *testing.T) { processTools(t, bin) })
	t.Run("audit-file", func(t *testing.T) { processAuditFile(t, bin) })
	t.Run("long-line", func(t *testing.T) { processLongLine(t, bin) })
}

// processTools: each tool's success and error, through the process, and
// the audit wire on stderr.
func processTools(t *testing.T, bin string) {
	u := newEchoUpstream(t, nil)
	cfg := processPDP + u.service("api", "arca://svc/token", "") + serviceAt("gone", closedPort(t), "arca://svc/token", "") + `
[actions.show]
argv = ["sh", "-c", 'printf "%s\n" "$S"']
env = { S = "arca://svc/token" }

[actions.denied]
argv = ["true"]
env = { D = "arca://app/denied" }
`
	h := newHome(t, bin, cfg)
	const tok = "process-canary-token-4b1d"
	h.put(t, "arca://svc/token", tok)
	h.put(t, "arca://app/denied", "denied-canary-value")
	s := h.connect(t, "process-client", "--actor", "agent-p", "--audit-stderr")

	calls := []struct {
		tool       string
		args       map[string]any
		code, want string // code "": a success
		cause      string // details.cause of the error
	}{
		{"arca_list", map[string]any{}, "", "", ""},
		{"arca_list", map[string]any{"bogus": true}, "bad_request", `takes no argument "bogus"`, ""},
		{"arca_history", map[string]any{"ref": "arca://svc/token"}, "", "", ""},
		{"arca_history", map[string]any{"ref": "arca://svc/none"}, "not_found", "", ""},
		{"arca_history", map[string]any{"ref": "arca://app/denied"}, "denied", "not app/denied", ""},
		{"arca_changes", map[string]any{}, "", "", ""},
		{"arca_changes", map[string]any{"since": "nope"}, "bad_request", "", ""},
		{"arca_http", map[string]any{"service": "api", "method": "GET", "path": "/p"}, "", "", ""},
		{"arca_http", map[string]any{"service": "nope", "method": "GET", "path": "/p"}, "bad_request", "unknown service", ""},
		{"arca_http", map[string]any{"service": "gone", "method": "GET", "path": "/p"}, "upstream_failed", "", "connect"},
		{"arca_action", map[string]any{"action": "show"}, "", "", ""},
		{"arca_action", map[string]any{"action": "denied"}, "denied", "not app/denied", ""},
	}
	for _, c := range calls {
		res := s.call(t, c.tool, c.args)
		if c.code == "" {
			var v map[string]any
			success(t, res, &v)
			continue
		}
		if e := failsWith(t, c.tool, res, c.code, c.want); c.cause != "" && e.Details["cause"] != c.cause {
			t.Errorf("%s: details %v, want cause %s", c.tool, e.Details, c.cause)
		}
	}
	if _, err := s.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "arca_get", Arguments: map[string]any{}}); err == nil {
		t.Error("an unknown tool was answered as a tool")
	}
	var show execOut
	structured(t, s.call(t, "arca_action", map[string]any{"action": "show"}), &show)
	if show.Stdout != "<redacted:svc/token>\n" {
		t.Errorf("the action printed %d bytes, want the token redacted", len(show.Stdout))
	}
	if got := u.requests(); len(got) != 1 || got[0].header.Get("Authorization") != "Bearer "+tok {
		t.Errorf("the upstream did not receive the token (%d requests)", len(got))
	}
	s.close(t)

	evs := decodeEvents(t, s.stderr.Bytes())
	if len(evs) < 2 || evs[0].Event != "start" || evs[len(evs)-1].Event != "stop" || evs[len(evs)-1].Message != "eof" {
		t.Fatalf("stderr is not start, the calls, stop:\n%s", s.stderr.Bytes())
	}
	perCall := evs[1 : len(evs)-1]
	if len(perCall) != len(calls)+1 {
		t.Errorf("%d events between start and stop, want one per call (%d):\n%s", len(perCall), len(calls)+1, s.stderr.Bytes())
	}
	for _, ev := range perCall {
		if ev.Client != "process-client" || ev.Actor != "agent-p" || ev.Source != audit.SourceMCP {
			t.Errorf("event %s %s: client %q, actor %q, source %q", ev.Event, ev.Op, ev.Client, ev.Actor, ev.Source)
		}
	}
	noCanary(t, "the audit wire", s.stderr.Bytes(), tok)
}

// decodeEvents decodes an audit wire, each line an event.
func decodeEvents(t *testing.T, b []byte) []audit.Event {
	t.Helper()
	var evs []audit.Event
	for line := range bytes.SplitSeq(bytes.TrimSpace(b), []byte("\n")) {
		var ev audit.Event
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatalf("stderr line %q is no event: %v", line, err)
		}
		evs = append(evs, ev)
	}
	return evs
}

// processAuditFile: without --audit-stderr the session's events go to
// the audit file, after the CLI's own, stderr holds nothing, and the
// file's chain verifies.
func processAuditFile(t *testing.T, bin string) {
	h := newHome(t, bin, "")
	h.put(t, "arca://app/db", "audit-file-canary")
	s := h.connect(t, "file-client", "--actor", "agent-f")
	var out map[string]any
	success(t, s.call(t, "arca_list", map[string]any{}), &out)
	failsWith(t, "arca_history", s.call(t, "arca_history", map[string]any{"ref": "arca://app/none"}), "not_found", "")
	s.close(t)
	if b := s.stderr.Bytes(); len(b) != 0 {
		t.Errorf("stderr holds %q, want nothing", b)
	}
	b, err := os.ReadFile(filepath.Join(h.home, ".local/state/arca/audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	var mcp []string
	for _, ev := range decodeEvents(t, b) {
		if ev.Source == audit.SourceMCP {
			mcp = append(mcp, ev.Event+":"+ev.Op+":"+ev.Client+":"+ev.Actor)
		}
	}
	want := []string{"start:::", "list:list:file-client:agent-f", "error:history:file-client:agent-f", "stop:::"}
	if strings.Join(mcp, " ") != strings.Join(want, " ") {
		t.Errorf("the session's events in the audit file: %q, want %q", mcp, want)
	}
	if out, err := h.command("audit", "verify").CombinedOutput(); err != nil || !strings.Contains(string(out), ": ok,") {
		t.Errorf("arca audit verify: %v\n%s", err, out)
	}
}

// processLongLine: a 100 MiB line, written in chunks, is answered with
// -32700 and id null, the call after it is answered, and the process's
// peak memory stays far below the line's size.
func processLongLine(t *testing.T, bin string) {
	h := newHome(t, bin, "")
	cmd := h.command("mcp", "--audit-stderr")
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
	t.Cleanup(func() { _ = stdin.Close(); _ = cmd.Wait() })
	lines := make(chan []byte)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- bytes.Clone(sc.Bytes())
		}
	}()
	next := func(what string) map[string]any {
		t.Helper()
		l, ok := <-lines
		if !ok {
			t.Fatalf("arca mcp ended before %s", what)
		}
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("%s: %q: %v", what, l, err)
		}
		return m
	}
	write := func(s string) {
		t.Helper()
		if _, err := io.WriteString(stdin, s); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}` + "\n")
	if m := next("the initialize answer"); m["id"] != 1.0 || m["result"] == nil {
		t.Fatalf("initialize answered %v", m)
	}
	write(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")

	// The line: a call whose argument is 100 MiB, written 1 MiB at a time.
	write(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"arca_list","arguments":{"env":"`)
	chunk := bytes.Repeat([]byte("x"), 1<<20)
	for range 100 {
		if _, err := stdin.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	write(`"}}}` + "\n")
	write(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"arca_list","arguments":{}}}` + "\n")

	parse := next("the long line's answer")
	if id, ok := parse["id"]; !ok || id != nil {
		t.Errorf("the long line's answer has id %v (present %v), want null", id, ok)
	}
	if e, _ := parse["error"].(map[string]any); e == nil || e["code"] != -32700.0 {
		t.Fatalf("the long line was answered %v, want -32700", parse)
	}
	call := next("the call after the long line")
	if call["id"] != 3.0 || call["result"] == nil {
		t.Fatalf("the call after the long line was answered %v", call)
	}
	if res, _ := call["result"].(map[string]any); res["isError"] == true {
		t.Fatalf("the call after the long line failed: %v", res)
	}
	if runtime.GOOS == "linux" {
		if hwm := peakRSS(t, cmd.Process.Pid); hwm > 64<<20 {
			t.Errorf("arca mcp's peak RSS is %d MiB reading a 100 MiB line, want under 64", hwm>>20)
		}
	}
	// A call and the end of input at once: the call is answered, then
	// the session ends.
	write(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"arca_changes","arguments":{}}}` + "\n")
	_ = stdin.Close()
	if last := next("the call written with the end of input"); last["id"] != 4.0 || last["result"] == nil {
		t.Fatalf("the last call was answered %v", last)
	}
	if _, ok := <-lines; ok {
		t.Error("arca mcp wrote more after the last call's answer")
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("arca mcp ended: %v", err)
	}
}

// peakRSS is the peak resident set size of process pid, in bytes
// (VmHWM in /proc/PID/status).
func peakRSS(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			if err != nil {
				t.Fatalf("VmHWM %q: %v", rest, err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/PID/status")
	return 0
}
