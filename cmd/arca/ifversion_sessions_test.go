package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// casSession is a live arca serve: one request written, its reply read.
type casSession struct {
	in  io.WriteCloser
	out *bufio.Reader
}

func (h *arcaHome) casServe(t *testing.T) *casSession {
	t.Helper()
	cmd := exec.Command("arca", "serve")
	cmd.Env, cmd.Dir = h.env, h.dir
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Wait() })
	return &casSession{in: in, out: bufio.NewReader(out)}
}

// casReply is one response: ok, the error's code and details, the result.
type casReply struct {
	OK    bool `json:"ok"`
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Details struct {
			Current *uint64 `json:"current_version"`
		} `json:"details"`
	} `json:"error"`
	Result struct {
		Version uint64 `json:"version"`
		Cursor  string `json:"cursor"`
		Changes []struct {
			Ref   string `json:"ref"`
			State string `json:"state"`
		} `json:"changes"`
	} `json:"result"`
}

func (s *casSession) ask(t *testing.T, req string) casReply {
	t.Helper()
	if _, err := io.WriteString(s.in, req+"\n"); err != nil {
		t.Fatal(err)
	}
	line, err := s.out.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	var r casReply
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("reply %q: %v", line, err)
	}
	return r
}

// Two live serve sessions and the CLI write one name with if_version,
// each after the other's reply: a write that names a version another has
// since replaced is a conflict that names the current version and holds
// no value; the session that wrote nothing still reads the winner; a
// cursor a session holds reports the CLI's write once.
func TestIfVersionAcrossSessionsAndCLI(t *testing.T) {
	h := newArcaHome(t)
	a, b := h.casServe(t), h.casServe(t)
	const ref = `"arca://app/cas"`
	if r := a.ask(t, `{"op":"put","ref":`+ref+`,"value":"canary-a1","if_version":0}`); !r.OK || r.Result.Version != 1 {
		t.Fatalf("first put: %+v", r)
	}
	cur := b.ask(t, `{"op":"changes"}`).Result.Cursor
	if r := b.ask(t, `{"op":"put","ref":`+ref+`,"value":"canary-b2","if_version":0}`); r.OK || r.Error.Code != "conflict" || r.Error.Details.Current == nil || *r.Error.Details.Current != 1 {
		t.Fatalf("a put if none over version 1: %+v", r)
	}
	if r := b.ask(t, `{"op":"put","ref":`+ref+`,"value":"canary-b2","if_version":1}`); !r.OK || r.Result.Version != 2 {
		t.Fatalf("b's put over version 1: %+v", r)
	}
	r := a.ask(t, `{"op":"put","ref":`+ref+`,"value":"canary-a3","if_version":1}`)
	if r.OK || r.Error.Code != "conflict" || *r.Error.Details.Current != 2 || strings.Contains(r.Error.Message, "canary") {
		t.Fatalf("a's stale put: %+v", r)
	}
	_, st, stderr := h.status(t, []byte("canary-cli"), "arca", "put", "--if-version", "1", "arca://app/cas")
	if st != 5 || strings.Contains(stderr, "canary") || !strings.Contains(stderr, "the current version is 2") {
		t.Fatalf("the CLI's stale put: exit %d, %q", st, stderr)
	}
	if out := h.run(t, []byte("canary-cli"), "arca", "put", "--if-version", "2", "arca://app/cas"); !strings.Contains(string(out), "version 3") {
		t.Fatalf("the CLI's put over version 2: %s", out)
	}
	if r := a.ask(t, `{"op":"rm","ref":`+ref+`,"if_version":2}`); r.OK || *r.Error.Details.Current != 3 {
		t.Fatalf("a's stale rm: %+v", r)
	}
	ch := b.ask(t, `{"op":"changes","since":"`+cur+`"}`)
	if len(ch.Result.Changes) != 1 || ch.Result.Changes[0].Ref != "arca://app/cas" || ch.Result.Changes[0].State != "current" {
		t.Errorf("changes since before the writes: %+v", ch.Result)
	}
	if again := b.ask(t, `{"op":"changes","since":"`+ch.Result.Cursor+`"}`); len(again.Result.Changes) != 0 {
		t.Errorf("changes reported twice: %+v", again.Result)
	}
	if got := string(h.run(t, nil, "arca", "get", "arca://app/cas")); got != "canary-cli" {
		t.Errorf("the value now: %q", got)
	}
}
