package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"filippo.io/age/armor"
)

// waitSlow is wait for a verb that runs scrypt at age's work factor, a
// second or so, much more on a loaded machine: the bound only catches a
// hang.
func (s *ttySession) waitSlow(t *testing.T) (int, string) {
	t.Helper()
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Minute):
		t.Fatal("arca did not exit within 3 minutes")
	}
	<-s.closedCh(t)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmd.ProcessState.ExitCode(), string(s.screen)
}

// closedCh is closed once the terminal's other end is gone.
func (s *ttySession) closedCh(t *testing.T) <-chan struct{} {
	c := make(chan struct{})
	go func() {
		defer close(c)
		for {
			s.mu.Lock()
			closed, more := s.closed, s.more
			s.mu.Unlock()
			if closed {
				return
			}
			<-more
		}
	}()
	return c
}

// init --passphrase asks for the new passphrase twice on the terminal,
// without echo, and writes the identity protected.
func TestInitPassphraseAtTerminal(t *testing.T) {
	h := newBareHome(t)
	s := startAtTerminal(t, h, "init", "--passphrase")
	s.waitFor(t, "passphrase for "+filepath.Join(h.dir, ".config/arca/identity.txt")+": ")
	s.send(t, "pw-CANARY\n")
	s.waitFor(t, "the same passphrase again: ")
	s.send(t, "pw-CANARY\n")
	if st, screen := s.waitSlow(t); st != 0 || strings.Contains(screen, "CANARY") {
		t.Fatalf("init: exit %d, the terminal showed %q", st, screen)
	}
	b, err := os.ReadFile(filepath.Join(h.dir, ".config/arca/identity.txt"))
	if err != nil || bytes.Contains(b, []byte("AGE-SECRET-KEY")) || !bytes.HasPrefix(b, []byte(armor.Header)) {
		t.Fatalf("the identity file is not protected (%v)", err)
	}
	// Two passphrases that differ write nothing.
	h = newBareHome(t)
	s = startAtTerminal(t, h, "init", "--passphrase")
	s.waitFor(t, "passphrase for ")
	s.send(t, "one\n")
	s.waitFor(t, "the same passphrase again: ")
	s.send(t, "two\n")
	if st, screen := s.wait(t); st != 1 || !strings.Contains(screen, "the two passphrases differ") {
		t.Fatalf("differing passphrases: exit %d, the terminal showed %q", st, screen)
	}
	if _, err := os.Stat(filepath.Join(h.dir, ".config/arca/identity.txt")); err == nil {
		t.Error("an identity file was written")
	}
}

// A protected identity's passphrase is asked on the terminal without
// echo, once a verb; Ctrl-D at the prompt aborts; a wrong one is an error.
func TestPassphraseAtTerminal(t *testing.T) {
	h := newArcaHome(t)
	h.run(t, []byte("s3cret"), "arca", "put", "arca://app/db")
	protectAt(t, h, "pw-CANARY")

	s := startAtTerminal(t, h, "get", "arca://app/db")
	s.waitFor(t, "passphrase for ")
	s.send(t, "pw-CANARY\n")
	if st, screen := s.wait(t); st != 0 || strings.Count(screen, "passphrase for ") != 1 || strings.Contains(screen, "CANARY") || s.stdout.String() != "s3cret" {
		t.Fatalf("get: exit %d, the terminal showed %q", st, screen)
	}

	s = startAtTerminal(t, h, "list")
	s.waitFor(t, "passphrase for ")
	s.send(t, "\x04")
	if st, screen := s.wait(t); st != 1 || !strings.Contains(screen, "end of input at the prompt (Ctrl-D): aborted") {
		t.Fatalf("Ctrl-D: exit %d, the terminal showed %q", st, screen)
	}

	s = startAtTerminal(t, h, "list")
	s.waitFor(t, "passphrase for ")
	s.send(t, "wrong-CANARY\n")
	if st, screen := s.wait(t); st != 1 || !strings.Contains(screen, "wrong passphrase") || strings.Contains(screen, "CANARY") {
		t.Fatalf("a wrong passphrase: exit %d, the terminal showed %q", st, screen)
	}
}

// serve, its stdin the request pipe and its stderr the audit wire, asks
// for the passphrase on its terminal, once, at start.
func TestServeAsksOnTheTerminal(t *testing.T) {
	h := newArcaHome(t)
	h.run(t, []byte("s3cret"), "arca", "put", "arca://app/db")
	protectAt(t, h, "pw-CANARY")

	var wire bytes.Buffer
	s := serveAtTerminal(t, h, `{"id":"1","op":"get","ref":"arca://app/db"}`+"\n"+`{"id":"2","op":"get","ref":"arca://app/db"}`+"\n", &wire)
	s.waitFor(t, "passphrase for ")
	s.send(t, "pw-CANARY\n")
	st, screen := s.wait(t)
	if st != 0 || strings.Count(screen, "passphrase for ") != 1 || strings.Contains(screen, "CANARY") {
		t.Fatalf("serve: exit %d, the terminal showed %q", st, screen)
	}
	if n := strings.Count(s.stdout.String(), `"value":"s3cret"`); n != 2 {
		t.Errorf("serve answered %q", s.stdout.String())
	}
	if strings.Contains(wire.String(), "passphrase for") || strings.Contains(wire.String(), "CANARY") {
		t.Errorf("the audit wire holds the prompt or the passphrase: %q", wire.String())
	}
}

// A change asks the current passphrase, then the new one twice, each
// under its own words; the file then opens by the new one alone.
func TestPassphraseChangeAtTerminal(t *testing.T) {
	h := newArcaHome(t)
	h.run(t, []byte("s3cret"), "arca", "put", "arca://app/db")
	protectAt(t, h, "old-CANARY")

	s := startAtTerminal(t, h, "identity", "passphrase")
	s.waitFor(t, "passphrase for ")
	s.send(t, "old-CANARY\n")
	s.waitFor(t, "new passphrase for ")
	s.send(t, "new-CANARY\n")
	s.waitFor(t, "the same new passphrase again: ")
	s.send(t, "new-CANARY\n")
	if st, screen := s.waitSlow(t); st != 0 || strings.Contains(screen, "CANARY") {
		t.Fatalf("identity passphrase: exit %d, the terminal showed %q", st, screen)
	}
	if out := passFile(t, h, "new-CANARY").run(t, nil, "arca", "get", "arca://app/db"); string(out) != "s3cret" {
		t.Fatalf("get by the new passphrase: %q", out)
	}
	if _, st, stderr := passFile(t, h, "old-CANARY").status(t, nil, "arca", "get", "arca://app/db"); st != 1 || !strings.Contains(stderr, "wrong passphrase") {
		t.Fatalf("get by the old passphrase: exit %d, %q", st, stderr)
	}
}

// serveAtTerminal starts arca serve in h with a terminal of its own (the
// session's), its stdin the requests and its stderr wire: what an
// orchestrator started at a terminal does.
func serveAtTerminal(t *testing.T, h *arcaHome, requests string, wire *bytes.Buffer) *ttySession {
	t.Helper()
	master, slave := openPTY(t)
	s := &ttySession{master: master, more: make(chan struct{})}
	s.cmd = exec.Command("arca", "serve")
	s.cmd.Env, s.cmd.Dir = h.env, h.dir
	s.cmd.Stdin = strings.NewReader(requests)
	s.cmd.Stdout, s.cmd.Stderr = &s.stdout, wire
	s.cmd.ExtraFiles = []*os.File{slave}
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 3}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	t.Cleanup(func() { s.cmd.Process.Kill() })
	go s.read()
	return s
}
