package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// The MCP sessions of the docs are run too. A block marked
//
//	<!-- mcp [clock=T] [exit=N] [ARGS...] -->
//
// holds the JSON-RPC lines of one arca mcp session: what the client
// sends (a line with a "method", or a line that is no JSON object), what
// arca answers (a line with a "result" or an "error" and no "method"),
// and audit events (a line with an "event": the session is then run with
// --audit-stderr among its ARGS). It runs in a fresh HOME after arca init,
// with the docs' files, as arca mcp ARGS, driven by the helper command
// mcphost: each call is sent once the call before it is answered, as a
// client that waits for each answer does, so the answers come in the
// order shown. Its stdout must be the answers shown, exactly; each event
// shown must be on its stderr, in the order shown; without
// --audit-stderr, its stderr must be empty. "…" and clock=T, exit=N and a
// mark's commands are as in serve blocks (docserve_test.go), and so are
// $DOC_UPSTREAM and the cursor mark "f1.…" in a call, which stands for
// the cursor the latest answer's structured content named. A line
// "$ CMD" is a command run (with bash, in the session's directory) once
// every call above it is answered; the lines after it, up to the next
// JSON-RPC message or event, are what it prints, stdout and stderr
// together, exactly.
func TestDocMCP(t *testing.T) {
	dir := sessionScripts(t, "mcp", mcpScript)
	p := scriptParams(dir, withURLs(map[string]string{docUpstreamVar: docUpstream(t)}))
	p.Cmds["cmpdoc"] = cmdCmpdoc
	p.Cmds["inorder"] = cmdInorder
	testscript.Run(t, p)
}

// mcpLine is how a line of an mcp block is read.
type mcpLine int

const (
	lineSent mcpLine = iota
	lineAnswer
	lineEvent
	lineCommand
)

// mcpKind says what a line of an mcp block is.
func mcpKind(l string) mcpLine {
	if strings.HasPrefix(l, "$ ") {
		return lineCommand
	}
	var obj map[string]json.RawMessage
	_ = json.Unmarshal([]byte(strings.ReplaceAll(l, "…", "0")), &obj)
	switch {
	case obj["event"] != nil:
		return lineEvent
	case obj["method"] == nil && (obj["result"] != nil || obj["error"] != nil):
		return lineAnswer
	}
	return lineSent
}

// mcpScript turns an mcp block into a transcript.
func mcpScript(b docBlock) (string, error) {
	var cmds, files, session, answers, events strings.Builder
	var args []string
	status := "0"
	for _, a := range strings.Fields(b.arg) {
		switch {
		case strings.HasPrefix(a, "clock="):
			cmds.WriteString("env ARCATEST_NOW=" + strings.TrimPrefix(a, "clock=") + "\n")
		case strings.HasPrefix(a, "exit="):
			status = strings.TrimPrefix(a, "exit=")
		default:
			args = append(args, a)
		}
	}
	cmds.WriteString("exec arca init\n")
	if err := given(&cmds, &files, b.more); err != nil {
		return "", err
	}
	var outs []*strings.Builder // what each command prints
	printing := false           // the lines are a command's output
	for _, l := range strings.Split(strings.TrimSuffix(b.body, "\n"), "\n") {
		kind := mcpKind(l)
		printing = printing && kind == lineSent && !isJSONRPC(l)
		if printing {
			outs[len(outs)-1].WriteString(l + "\n")
			continue
		}
		switch kind {
		case lineCommand:
			session.WriteString(l + "\n")
			outs = append(outs, &strings.Builder{})
			printing = true
		case lineEvent:
			events.WriteString(l + "\n")
		case lineAnswer:
			answers.WriteString(l + "\n")
		default:
			session.WriteString("> " + l + "\n")
		}
	}
	stderrIsAudit := false
	for _, a := range args {
		stderrIsAudit = stderrIsAudit || a == "--audit-stderr"
	}
	if events.Len() > 0 && !stderrIsAudit {
		return "", errors.New("a session that shows audit events runs with --audit-stderr")
	}
	run := strings.TrimSpace("mcphost session.txt arca mcp " + strings.Join(args, " "))
	fmt.Fprintf(&files, "-- session.txt --\n%s", session.String())
	if status == "0" {
		fmt.Fprintf(&cmds, "exec %s\n", run)
	} else {
		fmt.Fprintf(&cmds, "exitcode %s %s\n", status, run)
	}
	if answers.Len() > 0 {
		cmds.WriteString("cmpdoc stdout want.stdout\n")
		fmt.Fprintf(&files, "-- want.stdout --\n%s", answers.String())
	} else {
		cmds.WriteString("! stdout .\n")
	}
	switch {
	case events.Len() > 0:
		cmds.WriteString("inorder stderr want.stderr\n")
		fmt.Fprintf(&files, "-- want.stderr --\n%s", events.String())
	case !stderrIsAudit:
		cmds.WriteString("! stderr .\n")
	}
	for i, o := range outs {
		fmt.Fprintf(&cmds, "cmpdoc cmd-%d.out want-cmd-%d.out\n", i+1, i+1)
		fmt.Fprintf(&files, "-- want-cmd-%d.out --\n%s", i+1, o.String())
	}
	return cmds.String() + files.String(), nil
}

// isJSONRPC reports whether l is a JSON-RPC message: a JSON object with
// a "jsonrpc" member ("…" read as a number).
func isJSONRPC(l string) bool {
	var obj map[string]json.RawMessage
	return json.Unmarshal([]byte(strings.ReplaceAll(l, "…", "0")), &obj) == nil && obj["jsonrpc"] != nil
}

// mcpHost is the helper command mcphost SESSION ARCA [ARGS...]: it runs
// ARCA ARGS (arca mcp …) as an MCP client that waits for each answer
// would, sending the lines of SESSION ("> LINE" a line to send, "$ CMD" a
// command to run) and printing every line arca answers, in the order it
// answers them. arca's stderr is its own; its exit status is arca's (3:
// the session could not be run).
func mcpHost() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: mcphost SESSION ARCA [ARGS...]")
		os.Exit(2)
	}
	code, err := runMCPHost(os.Args[1], os.Args[2:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcphost:", err)
		os.Exit(3)
	}
	os.Exit(code)
}

// runMCPHost runs the session of file against argv.
func runMCPHost(file string, argv []string) (int, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return 0, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	h := &mcpClient{in: in, answers: make(chan string)}
	go func() {
		defer close(h.answers)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 8<<20)
		for sc.Scan() {
			h.answers <- sc.Text()
		}
	}()
	for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if err := h.step(l); err != nil {
			_ = cmd.Process.Kill()
			return 0, err
		}
	}
	in.Close()
	for l := range h.answers {
		fmt.Println(l)
	}
	if err := cmd.Wait(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode(), nil
		}
		return 0, err
	}
	return 0, nil
}

// mcpClient is a session being run: arca's stdin, its answers, the
// latest cursor an answer named, and how many commands ran (command N's
// output goes to the file cmd-N.out).
type mcpClient struct {
	in       io.Writer
	answers  chan string
	cursor   string
	commands int // how many commands ran
}

// step runs one line of a session file.
func (h *mcpClient) step(l string) error {
	if cmd, ok := strings.CutPrefix(l, "$ "); ok {
		got, err := exec.Command("bash", "-c", cmd).CombinedOutput()
		if err != nil {
			return fmt.Errorf("$ %s: %v\n%s", cmd, err, got)
		}
		h.commands++
		return os.WriteFile(fmt.Sprintf("cmd-%d.out", h.commands), got, 0o600)
	}
	line, ok := strings.CutPrefix(l, "> ")
	if !ok {
		return fmt.Errorf("a line that is neither \"> message\" nor \"$ command\": %q", l)
	}
	if strings.Contains(line, cursorMark) {
		if h.cursor == "" {
			return fmt.Errorf("%s names a cursor, and no answer above it named one", line)
		}
		line = strings.ReplaceAll(line, cursorMark, `"`+h.cursor+`"`)
	}
	if _, err := io.WriteString(h.in, line+"\n"); err != nil {
		return fmt.Errorf("sending %s: %v", line, err)
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal([]byte(line), &msg) != nil || msg.ID == nil || msg.Method == "" {
		return nil // no call: nothing to wait for
	}
	return h.await(msg.ID, line)
}

// await prints arca's answers up to the one to the call of id.
func (h *mcpClient) await(id json.RawMessage, line string) error {
	for {
		select {
		case a, ok := <-h.answers:
			if !ok {
				return fmt.Errorf("arca mcp ended before it answered %s", line)
			}
			fmt.Println(a)
			var r struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Result struct {
					Structured struct {
						Cursor string `json:"cursor"`
					} `json:"structuredContent"`
				} `json:"result"`
			}
			if json.Unmarshal([]byte(a), &r) != nil || r.Method != "" || !bytes.Equal(r.ID, id) {
				continue
			}
			if c := r.Result.Structured.Cursor; c != "" {
				h.cursor = c
			}
			return nil
		case <-time.After(hostReplyWait):
			return fmt.Errorf("no answer in %s to %s", hostReplyWait, line)
		}
	}
}

// TestMCPScript: an mcp block's lines go where they belong: what the
// client sends to the session file, a command's output to its own
// check, answers to stdout, events to stderr; a block that shows events
// without --audit-stderr is refused.
func TestMCPScript(t *testing.T) {
	b := docBlock{arg: "clock=2026-12-06T10:00:00Z --actor a --audit-stderr", body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"arca_list"}}
{"jsonrpc":"2.0","id":1,"result":{}}
$ cat log
{"op":"list"}
not json
{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"m"}}
{"v":1,"event":"stop","message":"eof","source":"mcp"}
`}
	got, err := mcpScript(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"env ARCATEST_NOW=2026-12-06T10:00:00Z\n",
		"exec mcphost session.txt arca mcp --actor a --audit-stderr\n",
		"-- session.txt --\n> {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"arca_list\"}}\n$ cat log\n",
		"-- want-cmd-1.out --\n{\"op\":\"list\"}\nnot json\n",
		"-- want.stdout --\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n{\"jsonrpc\":\"2.0\",\"id\":null,",
		"-- want.stderr --\n{\"v\":1,\"event\":\"stop\"",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the transcript lacks %q:\n%s", want, got)
		}
	}
	b.arg = "--actor a"
	if _, err := mcpScript(b); err == nil {
		t.Error("a block with events and no --audit-stderr was accepted")
	}
}
