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

// hostStep is one step of such a session: a request line to send, or a
// command to run.
type hostStep struct {
	request, command string
}

// hostSteps parses a session file: "> LINE" is a request, "$ CMD" a
// command.
func hostSteps(data string) ([]hostStep, error) {
	var steps []hostStep
	for _, l := range strings.Split(strings.TrimSuffix(data, "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "> "):
			steps = append(steps, hostStep{request: strings.TrimPrefix(l, "> ")})
		case strings.HasPrefix(l, "$ "):
			steps = append(steps, hostStep{command: strings.TrimPrefix(l, "$ ")})
		default:
			return nil, fmt.Errorf("a line that is neither \"> request\" nor \"$ command\": %q", l)
		}
	}
	return steps, nil
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
	steps, err := hostSteps(string(data))
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
			if _, err := io.WriteString(in, s.request+"\n"); err != nil {
				return 0, fmt.Errorf("sending %s: %v", s.request, err)
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
// requests were sent and answered, and the variables a command gets.
type host struct {
	replies        <-chan string
	sent, answered int
	commands       int
	vars           map[string]string
}

// run waits for the response to every request sent, then runs command
// and writes what it printed to cmd-N.out.
func (h *host) run(command string) error {
	for h.answered < h.sent {
		select {
		case l, ok := <-h.replies:
			if !ok {
				return fmt.Errorf("serve ended with %d of %d requests answered, before $ %s", h.answered, h.sent, command)
			}
			fmt.Println(l)
			h.answered++
			h.learn(l)
		case <-time.After(hostReplyWait):
			return fmt.Errorf("no response in %s, before $ %s", hostReplyWait, command)
		}
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

// learn takes the token and base URLs of a proxy result.
func (h *host) learn(line string) {
	var r struct {
		Result struct {
			BaseURLs map[string]string `json:"base_urls"`
			Token    string            `json:"token"`
		} `json:"result"`
	}
	if json.Unmarshal([]byte(line), &r) != nil || r.Result.Token == "" {
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
