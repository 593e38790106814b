package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// A serve session of the docs may run commands while serve runs: a line
// "$ CMD" of its block is a command the agent host runs (a tool pointed at
// the session's proxy, say) once every request above it has its
// response, and the lines after it, up to the next request, response or
// event (a JSON object with an "op", "ok" or "event" member), are what it
// prints, stdout and stderr together, exactly ("…" as in the rest of the
// block). The command runs with bash, in the session's directory, with
// what the latest proxy result handed out: $PROXY_TOKEN, the token;
// $PROXY_URL_NAME, the base URL of service name (upper case, "-" as "_");
// and $PROXY_URL, the base URL when there is one. Such a session is run
// by the helper command servehost (serveHost).
//
// The host also keeps a session's requests in step where a doc needs it.
// A request that names "ap_…" (an approval, which serve names at random)
// is sent once every request above it has its response, with the id of
// the latest approval a response named (error.details.approval.id) in
// its place. In a lockstep session (the mark's word lockstep) every
// request waits so: a client that sends one request at a time, whose
// decisions therefore come back in the order it sent them. A request
// that names "f1.…" (a changes cursor, which holds the vault's id) is
// sent so too, with the cursor the latest changes result named in its
// place.

// hostStep is one step of such a session: a request line to send, or a
// command to run.
type hostStep struct {
	request, command string
}

// approvalMark is what a doc's request writes for the id of the latest
// approval the session's responses named.
const approvalMark = `"ap_…"`

// cursorMark is what a doc's request writes for the cursor of the latest
// changes result.
const cursorMark = `"f1.…"`

// hostSteps parses a session file: "> LINE" is a request, "$ CMD" a
// command; "lockstep" alone on the first line makes every request wait
// for the answers to those above it.
func hostSteps(data string) (steps []hostStep, lockstep bool, err error) {
	lines := strings.Split(strings.TrimSuffix(data, "\n"), "\n")
	if len(lines) > 0 && lines[0] == "lockstep" {
		lockstep, lines = true, lines[1:]
	}
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "> "):
			steps = append(steps, hostStep{request: strings.TrimPrefix(l, "> ")})
		case strings.HasPrefix(l, "$ "):
			steps = append(steps, hostStep{command: strings.TrimPrefix(l, "$ ")})
		default:
			return nil, false, fmt.Errorf("a line that is neither \"> request\" nor \"$ command\": %q", l)
		}
	}
	return steps, lockstep, nil
}

// hostReplyWait bounds the wait for serve's responses before a command:
// a deadline to fail by, not an order.
const hostReplyWait = 30 * time.Second

// serveHost is the helper command servehost SESSION ARCA [ARGS...]: it
// runs ARCA ARGS (arca serve …) as an agent host would, sending the
// requests of SESSION in order and, at each command, waiting for the
// responses so far and running the command with the proxy's token and
// URLs in its environment; command N's output goes to the file cmd-N.out.
// serve's stdout and stderr are its own; its exit status is serve's (3:
// the session could not be run).
func serveHost() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: servehost SESSION ARCA [ARGS...]")
		os.Exit(2)
	}
	code, err := runHost(os.Args[1], os.Args[2:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "servehost:", err)
		os.Exit(3)
	}
	os.Exit(code)
}

// runHost runs the session of file against argv.
func runHost(file string, argv []string) (int, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	steps, lockstep, err := hostSteps(string(data))
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
	replies := make(chan string)
	go func() {
		defer close(replies)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 8<<20)
		for sc.Scan() {
			replies <- sc.Text()
		}
	}()
	h := &host{replies: replies, vars: map[string]string{}}
	for _, s := range steps {
		if s.command == "" {
			line, err := h.prepare(s.request, lockstep)
			if err != nil {
				_ = cmd.Process.Kill()
				return 0, err
			}
			if _, err := io.WriteString(in, line+"\n"); err != nil {
				return 0, fmt.Errorf("sending %s: %v", line, err)
			}
			h.sent++
			continue
		}
		if err := h.run(s.command); err != nil {
			_ = cmd.Process.Kill()
			return 0, err
		}
	}
	in.Close()
	for l := range replies {
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

// host is the state of a session being run: serve's responses, how many
// requests were sent and answered, the latest approval a response named,
// and the variables a command gets.
type host struct {
	replies        <-chan string
	sent, answered int
	commands       int
	approval       string
	cursor         string
	vars           map[string]string
}

// wait waits for the response to every request sent; before names the
// step that waits, for an error.
func (h *host) wait(before string) error {
	for h.answered < h.sent {
		select {
		case l, ok := <-h.replies:
			if !ok {
				return fmt.Errorf("serve ended with %d of %d requests answered, before %s", h.answered, h.sent, before)
			}
			fmt.Println(l)
			h.answered++
			h.learn(l)
		case <-time.After(hostReplyWait):
			return fmt.Errorf("no response in %s, before %s", hostReplyWait, before)
		}
	}
	return nil
}

// prepare returns the request line to send for request: once the
// requests above it are answered when it names an approval or a cursor
// or the session is in lockstep, with the latest approval's id in place
// of approvalMark and the latest cursor in place of cursorMark.
func (h *host) prepare(request string, lockstep bool) (string, error) {
	if !hostWaits(request) && !lockstep {
		return request, nil
	}
	if err := h.wait(request); err != nil {
		return "", err
	}
	for _, m := range []struct{ mark, what, got string }{{approvalMark, "an approval", h.approval}, {cursorMark, "a cursor", h.cursor}} {
		if !strings.Contains(request, m.mark) {
			continue
		}
		if m.got == "" {
			return "", fmt.Errorf("%s names %s, and no response above it named one", request, m.what)
		}
		request = strings.ReplaceAll(request, m.mark, `"`+m.got+`"`)
	}
	return request, nil
}

// hostWaits reports whether request waits for the answers above it: it
// names an approval or a cursor they hold.
func hostWaits(request string) bool {
	return strings.Contains(request, approvalMark) || strings.Contains(request, cursorMark)
}

// run waits for the response to every request sent, then runs command
// and writes what it printed to cmd-N.out.
func (h *host) run(command string) error {
	if err := h.wait("$ " + command); err != nil {
		return err
	}
	h.commands++
	c := exec.Command("bash", "-c", command)
	c.Env = os.Environ()
	for _, k := range slices.Sorted(maps.Keys(h.vars)) {
		c.Env = append(c.Env, k+"="+h.vars[k])
	}
	got, err := c.CombinedOutput()
	if err != nil {
		return fmt.Errorf("$ %s: %v\n%s", command, err, got)
	}
	return os.WriteFile(fmt.Sprintf("cmd-%d.out", h.commands), got, 0o600)
}

// learn takes the id of the approval an approval_required response
// names, the cursor of a changes result, and the token and base URLs of
// a proxy result.
func (h *host) learn(line string) {
	var r struct {
		Result struct {
			Cursor   string            `json:"cursor"`
			BaseURLs map[string]string `json:"base_urls"`
			Token    string            `json:"token"`
		} `json:"result"`
		Error struct {
			Details struct {
				Approval struct {
					ID string `json:"id"`
				} `json:"approval"`
			} `json:"details"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(line), &r) != nil {
		return
	}
	if id := r.Error.Details.Approval.ID; id != "" {
		h.approval = id
	}
	if r.Result.Cursor != "" {
		h.cursor = r.Result.Cursor
	}
	if r.Result.Token == "" {
		return
	}
	h.vars = map[string]string{"PROXY_TOKEN": r.Result.Token}
	for name, u := range r.Result.BaseURLs {
		h.vars["PROXY_URL_"+strings.ToUpper(strings.ReplaceAll(name, "-", "_"))] = u
		if len(r.Result.BaseURLs) == 1 {
			h.vars["PROXY_URL"] = u
		}
	}
}

// TestServeScriptCommands: a serve block with commands becomes a session
// the host runs, each command's output checked, and the proxy's answer
// sets the variables the commands read.
func TestServeScriptCommands(t *testing.T) {
	b := docBlock{arg: "--config c.toml", body: `{"id":1,"op":"proxy","services":["a"]}
{"id":1,"ok":true,"result":{"base_urls":{"a":"http://127.0.0.1:…/a"},"token":"…","expires_at":"…"}}
$ sh a.sh
{"path":"/x"}
401
{"id":2,"op":"proxy","stop":true}
{"id":2,"ok":true,"result":{"stopped":true}}
{"v":1,"event":"http","via":"proxy"}
`}
	script, err := serveScript(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"exec servehost session.txt arca serve --config c.toml\n",
		"-- session.txt --\n> {\"id\":1,\"op\":\"proxy\",\"services\":[\"a\"]}\n$ sh a.sh\n> {\"id\":2,\"op\":\"proxy\",\"stop\":true}\n--",
		"cmpdoc cmd-1.out want-cmd-1.out\n",
		"-- want-cmd-1.out --\n{\"path\":\"/x\"}\n401\n",
		"-- want.stderr --\n{\"v\":1,\"event\":\"http\",\"via\":\"proxy\"}\n",
	} {
		if !strings.Contains(script, want) {
			t.Errorf("the transcript lacks %q:\n%s", want, script)
		}
	}
	if strings.Contains(script, "requests.jsonl") {
		t.Errorf("a session with commands reads its requests from a file:\n%s", script)
	}

	h := &host{vars: map[string]string{}}
	h.learn(`{"id":1,"ok":true,"result":{"base_urls":{"a-b":"http://127.0.0.1:1/a-b","c":"http://127.0.0.1:1/c"},"token":"t1","expires_at":"x"}}`)
	if h.vars["PROXY_TOKEN"] != "t1" || h.vars["PROXY_URL_A_B"] != "http://127.0.0.1:1/a-b" || h.vars["PROXY_URL"] != "" {
		t.Errorf("two services: %v", h.vars)
	}
	h.learn(`{"id":2,"ok":true,"result":{"base_urls":{"c":"http://127.0.0.1:1/c"},"token":"t2","expires_at":"x"}}`)
	h.learn(`{"id":3,"ok":true,"result":{"stopped":true}}`)
	if h.vars["PROXY_TOKEN"] != "t2" || h.vars["PROXY_URL"] != "http://127.0.0.1:1/c" || h.vars["PROXY_URL_A_B"] != "" {
		t.Errorf("one service, then stop: %v", h.vars)
	}
}

// TestServeScriptApprovals: a lockstep block is run by the host, which
// sends each request once the one before it is answered; a request
// naming "ap_…" is sent with the id of the latest approval a response
// named, and one sent before any is an error.
func TestServeScriptApprovals(t *testing.T) {
	b := docBlock{arg: "lockstep --config c.toml", body: `{"id":1,"op":"list"}
{"id":1,"ok":true}
`}
	script, err := serveScript(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"exec servehost session.txt arca serve --config c.toml\n",
		"-- session.txt --\nlockstep\n> {\"id\":1,\"op\":\"list\"}\n--",
	} {
		if !strings.Contains(script, want) {
			t.Errorf("the lockstep transcript lacks %q:\n%s", want, script)
		}
	}
	b = docBlock{body: `{"id":2,"op":"approval","approval":"ap_…"}
{"id":2,"ok":true}
`}
	if script, err = serveScript(b); err != nil || !strings.Contains(script, "exec servehost session.txt arca serve\n") {
		t.Errorf("a block naming an approval is not run by the host (%v):\n%s", err, script)
	}
	steps, lockstep, err := hostSteps("lockstep\n> {}\n$ true\n")
	if err != nil || !lockstep || len(steps) != 2 {
		t.Errorf("hostSteps: %v, lockstep %v, %v", steps, lockstep, err)
	}

	h := &host{vars: map[string]string{}}
	if _, err := h.prepare(`{"op":"approval","approval":"ap_…"}`, false); err == nil {
		t.Error("a request naming an approval before any response named one was sent")
	}
	h.learn(`{"id":1,"ok":false,"error":{"code":"approval_required","message":"m","details":{"approval":{"id":"ap_1","summary":"s"}}}}`)
	h.learn(`{"id":2,"ok":true,"result":{"approval":"ap_2","state":"pending"}}`)
	got, err := h.prepare(`{"op":"approval","approval":"ap_…"}`, false)
	if err != nil || got != `{"op":"approval","approval":"ap_1"}` {
		t.Errorf("prepare: %s, %v", got, err)
	}
	if got, err := h.prepare(`{"op":"list"}`, true); err != nil || got != `{"op":"list"}` {
		t.Errorf("prepare in lockstep: %s, %v", got, err)
	}
}

// TestServeScriptCursors: a request naming "f1.…" is run by the host and
// sent with the cursor of the latest changes result; one sent before any
// is an error.
func TestServeScriptCursors(t *testing.T) {
	b := docBlock{body: `{"id":2,"op":"changes","since":"f1.…"}
{"id":2,"ok":true}
`}
	if script, err := serveScript(b); err != nil || !strings.Contains(script, "exec servehost session.txt arca serve\n") {
		t.Errorf("a block naming a cursor is not run by the host (%v):\n%s", err, script)
	}
	h := &host{vars: map[string]string{}}
	if _, err := h.prepare(`{"op":"changes","since":"f1.…"}`, false); err == nil {
		t.Error("a request naming a cursor before any response named one was sent")
	}
	h.learn(`{"id":1,"ok":true,"result":{"env":"default","cursor":"f1.ab.1.","changes":[]}}`)
	h.learn(`{"id":2,"ok":true,"result":{"env":"default","cursor":"f1.ab.2.","changes":[]}}`)
	got, err := h.prepare(`{"op":"changes","since":"f1.…"}`, false)
	if err != nil || got != `{"op":"changes","since":"f1.ab.2."}` {
		t.Errorf("prepare: %s, %v", got, err)
	}
}
