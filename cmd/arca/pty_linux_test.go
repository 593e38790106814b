package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY returns the two ends of a new pseudo-terminal (posix_openpt,
// unlockpt, ptsname by hand).
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open /dev/ptmx: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	fd := int(m.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock the pty: %v", err)
	}
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pty number: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open the pty's terminal: %v", err)
	}
	return m, s
}

// ttySession is arca run with a terminal as its stdin and stderr, its
// controlling terminal, as a person at a terminal runs it; stdout is a
// pipe.
type ttySession struct {
	cmd    *exec.Cmd
	master *os.File
	stdout bytes.Buffer

	mu     sync.Mutex
	screen []byte        // all the terminal showed
	more   chan struct{} // closed and replaced when screen grows
	closed bool          // the terminal's other end is gone
}

func startAtTerminal(t *testing.T, h *arcaHome, args ...string) *ttySession {
	t.Helper()
	return startTTY(t, h, false, args...)
}

// startTTY starts arca at a terminal; with ttyOut its stdout is the
// terminal too, else a pipe.
func startTTY(t *testing.T, h *arcaHome, ttyOut bool, args ...string) *ttySession {
	t.Helper()
	master, slave := openPTY(t)
	s := &ttySession{master: master, more: make(chan struct{})}
	s.cmd = exec.Command("arca", args...)
	s.cmd.Env, s.cmd.Dir = h.env, h.dir
	s.cmd.Stdin, s.cmd.Stderr, s.cmd.Stdout = slave, slave, &s.stdout
	if ttyOut {
		s.cmd.Stdout = slave
	}
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	t.Cleanup(func() { s.cmd.Process.Kill() })
	go s.read()
	return s
}

// read copies what the terminal shows into screen until its other end is
// closed (EIO).
func (s *ttySession) read() {
	buf := make([]byte, 4096)
	for {
		n, err := s.master.Read(buf)
		s.mu.Lock()
		s.screen = append(s.screen, buf[:n]...)
		s.closed = err != nil
		close(s.more)
		s.more = make(chan struct{})
		s.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// waitFor waits until the terminal showed text, failing if arca closed the
// terminal first. The 10 s bound only catches a hang.
func (s *ttySession) waitFor(t *testing.T, text string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		s.mu.Lock()
		screen, closed, more := string(s.screen), s.closed, s.more
		s.mu.Unlock()
		switch {
		case strings.Contains(screen, text):
			return
		case closed:
			t.Fatalf("arca left the terminal without showing %q; it showed %q", text, screen)
		}
		select {
		case <-more:
		case <-deadline:
			t.Fatalf("the terminal never showed %q; it showed %q", text, screen)
		}
	}
}

// waitClosed waits until arca closed the terminal, failing at once if it
// shows text first.
func (s *ttySession) waitClosed(t *testing.T, text string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		s.mu.Lock()
		screen, closed, more := string(s.screen), s.closed, s.more
		s.mu.Unlock()
		switch {
		case strings.Contains(screen, text):
			t.Fatalf("the terminal showed %q: %q", text, screen)
		case closed:
			return
		}
		select {
		case <-more:
		case <-deadline:
			t.Fatalf("arca kept the terminal open; it showed %q", screen)
		}
	}
}

// send types b at the terminal.
func (s *ttySession) send(t *testing.T, b string) {
	t.Helper()
	if _, err := s.master.Write([]byte(b)); err != nil {
		t.Fatal(err)
	}
}

// wait waits for arca to exit and returns its status and all the terminal
// showed.
func (s *ttySession) wait(t *testing.T) (int, string) {
	t.Helper()
	st := waitStatus(t, s.cmd)
	deadline := time.After(10 * time.Second)
	for {
		s.mu.Lock()
		screen, closed, more := string(s.screen), s.closed, s.more
		s.mu.Unlock()
		if closed {
			return st, screen
		}
		select {
		case <-more:
		case <-deadline:
			t.Fatalf("the terminal stayed open after arca exited; it showed %q", screen)
		}
	}
}

// A value typed at the terminal is stored as typed, without its newline,
// and never echoed.
func TestPutAtTerminal(t *testing.T) {
	h := newArcaHome(t)
	s := startAtTerminal(t, h, "put", "arca://app/db")
	s.waitFor(t, "value for arca://app/db: ")
	s.send(t, "typed-CANARY\n")
	st, screen := s.wait(t)
	if st != 0 || strings.Contains(screen, "CANARY") {
		t.Fatalf("exit %d, the terminal showed %q", st, screen)
	}
	if got := h.run(t, nil, "arca", "get", "arca://app/db"); string(got) != "typed-CANARY" {
		t.Fatalf("stored %q", got)
	}
}

// End of input at the prompt (Ctrl-D, on an empty line or after some
// characters) stores nothing, whatever is typed next: arca says so and
// exits 2.
func TestPutAtTerminalEndOfInput(t *testing.T) {
	// What is typed before Ctrl-D (CANARY) is never shown; what is typed
	// after it may be, by the terminal, once arca has given it back.
	for name, keys := range map[string][]string{
		"ctrl-d on an empty line":        {"\x04", "typed-after\n"},
		"ctrl-d after some characters":   {"abc-CANARY\x04", "def\n"},
		"ctrl-d twice after characters":  {"abc-CANARY\x04\x04"},
		"ctrl-d then nothing more typed": {"\x04"},
	} {
		t.Run(name, func(t *testing.T) {
			h := newArcaHome(t)
			for _, verb := range []string{"put", "rotate"} {
				if verb == "rotate" {
					h.put(t, "arca://app/db", []byte("before"))
				}
				s := startAtTerminal(t, h, verb, "arca://app/db")
				s.waitFor(t, "value for arca://app/db: ")
				for _, k := range keys {
					s.send(t, k)
				}
				st, screen := s.wait(t)
				const msg = "arca: end of input at the prompt: nothing was stored\r\n"
				if st != 2 || !strings.Contains(screen, msg) || strings.Contains(screen, "CANARY") {
					t.Errorf("%s: exit %d, the terminal showed %q; want exit 2 and %q", verb, st, screen, msg)
				}
				if s.stdout.Len() != 0 {
					t.Errorf("%s: stdout %q", verb, s.stdout.String())
				}
				out, gst, _ := h.status(t, nil, "arca", "get", "arca://app/db")
				if want := map[string]int{"put": 4, "rotate": 0}[verb]; gst != want || verb == "rotate" && string(out) != "before" {
					t.Errorf("%s: after the abort get exits %d with %q", verb, gst, out)
				}
			}
		})
	}
}

// A put or rotate that could not store its value is refused before the
// prompt: nobody types a secret in vain.
func TestPutAtTerminalRefusedBeforePrompt(t *testing.T) {
	h := newArcaHome(t)
	fresh := t.TempDir() // a HOME without a vault
	tests := []struct {
		name   string
		home   string
		args   []string
		status int
		msg    string
	}{
		{"bad ref", h.dir, []string{"put", "arca://app/../db"}, 2, "arca: invalid ref: segment 2 (ns) must start with a letter or digit"},
		{"bad ref, rotate", h.dir, []string{"rotate", "arca://db"}, 2, "arca: invalid ref:"},
		{"unknown env", h.dir, []string{"put", "--env", "prod", "arca://app/db"}, 2, `arca: unknown env "prod" (configured: default)`},
		{"unknown pinned env", h.dir, []string{"put", "arca://prod/app/db"}, 2, `arca: unknown env "prod" (configured: default)`},
		{"no vault yet", fresh, []string{"put", "arca://app/db"}, 1, "does not exist (run arca init)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hh := &arcaHome{dir: tc.home, env: withHome(h.env, tc.home)}
			s := startAtTerminal(t, hh, tc.args...)
			s.waitClosed(t, "value for")
			st, screen := s.wait(t)
			if st != tc.status || !strings.Contains(screen, tc.msg) || strings.Contains(screen, "value for") {
				t.Errorf("exit %d, the terminal showed %q; want exit %d, %q and no prompt", st, screen, tc.status, tc.msg)
			}
		})
	}
}

// withHome is env with HOME set to home.
func withHome(env []string, home string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, "HOME=") {
			out = append(out, kv)
		}
	}
	return append(out, "HOME="+home)
}

// A paste of several lines is refused, nothing stored, and the lines after
// the first are discarded unseen rather than left for the shell.
func TestPutAtTerminalRefusesManyLines(t *testing.T) {
	h := newArcaHome(t)
	s := startAtTerminal(t, h, "put", "arca://app/db")
	s.waitFor(t, "value for arca://app/db: ")
	s.send(t, "line1-CANARY\nline2-CANARY\nline3-CANARY\n")
	st, screen := s.wait(t)
	const msg = "arca: the value spans more than one line; nothing was stored: pipe it on stdin instead (arca put REF < file)\r\n"
	if st != 2 || !strings.HasSuffix(screen, msg) || strings.Contains(screen, "CANARY") {
		t.Errorf("exit %d, the terminal showed %q; want exit 2 and %q", st, screen, msg)
	}
	if _, gst, _ := h.status(t, nil, "arca", "get", "arca://app/db"); gst != 4 {
		t.Errorf("after the refusal get exits %d, want 4", gst)
	}
}
