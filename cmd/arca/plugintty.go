package main

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/arca-secrets/arca/vault/identity"
)

// terminalPrompter is how an age plugin (a YubiKey's, a Secure Enclave's)
// talks to the person running arca: on the controlling terminal,
// /dev/tty, opened for each message or question. Never stdout, which
// carries the asked-for data or serve's replies, and never stderr, which
// is serve's and mcp's audit wire. identity.pluginUI has bounded and
// quoted every text it is given.
type terminalPrompter struct{}

// openTTY opens the controlling terminal, or says there is none.
func openTTY() (*os.File, error) {
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, identity.ErrNoTerminal
	}
	return tty, nil
}

func (terminalPrompter) Message(name, text string) error {
	tty, err := openTTY()
	if err != nil {
		return err
	}
	defer tty.Close()
	_, err = fmt.Fprintf(tty, "age-plugin-%s: %s\n", name, text)
	return err
}

func (terminalPrompter) Ask(name, prompt string, secret bool) (string, error) {
	tty, err := openTTY()
	if err != nil {
		return "", err
	}
	defer tty.Close()
	return askLine(tty, fmt.Sprintf("age-plugin-%s: %s ", name, prompt), secret)
}

func (terminalPrompter) Confirm(name, prompt, yes, no string) (bool, error) {
	tty, err := openTTY()
	if err != nil {
		return false, err
	}
	defer tty.Close()
	if no == "" {
		_, err := askLine(tty, fmt.Sprintf("age-plugin-%s: %s (press enter for %s) ", name, prompt, yes), true)
		return err == nil, err
	}
	a, err := askLine(tty, fmt.Sprintf("age-plugin-%s: %s (1: %s, 2: %s) ", name, prompt, yes, no), false)
	switch {
	case err != nil:
		return false, err
	case a == "1":
		return true, nil
	case a == "2":
		return false, nil
	}
	return false, errors.New("the answer was neither 1 nor 2")
}

func (terminalPrompter) Waiting(name string) {
	if tty, err := openTTY(); err == nil {
		fmt.Fprintf(tty, "age-plugin-%s: waiting for the plugin (touch the key?)\n", name)
		tty.Close()
	}
}

// askLine prompts on the terminal tty and reads one line from it, without
// echo when hidden. Ctrl-D aborts; a line that does not fit the terminal's
// line is refused.
func askLine(tty *os.File, prompt string, hidden bool) (string, error) {
	fd := int(tty.Fd())
	restore := func() {}
	if hidden {
		r, err := echoOff(fd)
		if err != nil {
			return "", fmt.Errorf("the terminal: %v", err)
		}
		restore = r
	}
	fmt.Fprint(tty, prompt)
	buf := make([]byte, maxTerminalLine+2)
	n, err := readRetry(fd, buf)
	defer clear(buf)
	restore()
	if hidden {
		fmt.Fprintln(tty)
	}
	switch {
	case err != nil:
		return "", fmt.Errorf("the terminal: %v", err)
	case n == 0 || buf[n-1] != '\n':
		flushInput(fd)
		return "", errors.New("end of input at the prompt (Ctrl-D): aborted")
	case n-1 >= maxTerminalLine:
		return "", fmt.Errorf("an answer must be shorter than %d bytes", maxTerminalLine)
	}
	return string(buf[:n-1]), nil
}
